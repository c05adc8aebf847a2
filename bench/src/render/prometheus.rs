//! `--prometheus ADDR`: the run's figures served at `http://ADDR/metrics` in Prometheus's
//! text exposition format (version 0.0.4) while the run goes, from tiny_http on a thread of
//! its own. The figures are updated once per measured sample (and per segment for system
//! calls); a scrape reads a snapshot under a mutex, off the request path.
//!
//! Metrics (labels `backend`, and `statement` or `kind` where said):
//! - `doppio_requests_total`, `doppio_errors_total` (per `kind`), `doppio_rows_total`
//!   (counters, per backend) and `doppio_statement_requests_total`,
//!   `doppio_statement_errors_total`, `doppio_statement_rows_total` (per `statement` too);
//! - `doppio_latency_seconds` (summary of the last sample's successes: quantiles 0.5, 0.9,
//!   0.99, 0.999, with `_sum` and `_count` over the whole run);
//! - `doppio_client_cpu_seconds_total` (user + system CPU of the bench process while the
//!   backend ran, from getrusage at each sample);
//! - `doppio_syscalls_total` (system calls of the backend's measured segments, added when a
//!   segment ends; absent when the kernel does not let them be counted);
//! - `doppio_samples_total`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::engine::collect::Sample;
use crate::probe::process_cost::{process_cpu, Cost};

/// Quantiles of the latency summary.
const QUANTILES: [f64; 4] = [0.5, 0.9, 0.99, 0.999];

#[derive(Debug, Default)]
struct BackendMetrics {
    samples: u64,
    requests: u64,
    rows: u64,
    errors_by_kind: BTreeMap<&'static str, u64>,
    /// Per statement (by index): requests, errors, rows.
    statements: Vec<(u64, u64, u64)>,
    /// The last sample's quantiles, ns.
    quantiles: [u64; QUANTILES.len()],
    latency_count: u64,
    latency_sum_ns: f64,
    cpu: Duration,
    syscalls: Option<u64>,
}

#[derive(Debug)]
struct State {
    statement_names: Vec<String>,
    backends: BTreeMap<String, BackendMetrics>,
    /// Process CPU time at the previous sample.
    last_cpu: Duration,
}

/// The metrics endpoint of one run.
pub(crate) struct MetricsServer {
    state: Arc<Mutex<State>>,
    server: Arc<tiny_http::Server>,
    addr: SocketAddr,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for MetricsServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetricsServer")
            .field("addr", &self.addr)
            .finish()
    }
}

impl MetricsServer {
    /// Listens on `addr` (port 0: any free port, see [`MetricsServer::addr`]) for a run of
    /// a workload with these run statements.
    pub(crate) fn start(addr: SocketAddr, statement_names: Vec<String>) -> std::io::Result<Self> {
        let server = Arc::new(tiny_http::Server::http(addr).map_err(std::io::Error::other)?);
        let addr = server
            .server_addr()
            .to_ip()
            .ok_or_else(|| std::io::Error::other("the metrics server has no IP address"))?;
        let state = Arc::new(Mutex::new(State {
            statement_names,
            backends: BTreeMap::new(),
            last_cpu: process_cpu(),
        }));
        let thread = {
            let (server, state) = (server.clone(), state.clone());
            std::thread::Builder::new()
                .name("doppio-metrics".into())
                .spawn(move || serve(&server, &state))?
        };
        Ok(Self {
            state,
            server,
            addr,
            thread: Some(thread),
        })
    }

    /// Where it listens.
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Takes a measured sample of `backend`.
    pub(crate) fn sample(&self, backend: &str, s: &Sample) {
        let cpu = process_cpu();
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let spent = cpu.saturating_sub(st.last_cpu);
        st.last_cpu = cpu;
        let statements = st.statement_names.len();
        let b = st.backends.entry(backend.to_owned()).or_default();
        b.samples += 1;
        b.requests += s.requests;
        b.rows += s.rows;
        for (kind, n) in &s.errors {
            *b.errors_by_kind.entry(kind).or_default() += n;
        }
        b.statements.resize(statements, (0, 0, 0));
        for (k, c) in s.statements.iter().enumerate().take(statements) {
            let e = &mut b.statements[k];
            e.0 += c.requests;
            e.1 += c.errors;
            e.2 += c.rows;
        }
        for (q, v) in QUANTILES.iter().zip(b.quantiles.iter_mut()) {
            *v = s.latency.value_at_percentile(q * 100.0);
        }
        b.latency_count += s.latency.count();
        b.latency_sum_ns += s.latency.mean() * s.latency.count() as f64;
        b.cpu += spent;
    }

    /// Takes what one measured segment of `backend` cost (its system calls).
    pub(crate) fn segment(&self, backend: &str, cost: &Cost) {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let b = st.backends.entry(backend.to_owned()).or_default();
        if let Some(n) = cost.syscalls {
            b.syscalls = Some(b.syscalls.unwrap_or(0) + n);
        }
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(server: &tiny_http::Server, state: &Mutex<State>) {
    for request in server.incoming_requests() {
        let response = if request.url() == "/metrics" {
            let body = {
                let st = state.lock().unwrap_or_else(|p| p.into_inner());
                render(&st)
            };
            let mut r = tiny_http::Response::from_string(body);
            if let Ok(h) = tiny_http::Header::from_bytes(
                &b"Content-Type"[..],
                &b"text/plain; version=0.0.4; charset=utf-8"[..],
            ) {
                r.add_header(h);
            }
            r
        } else {
            tiny_http::Response::from_string("see /metrics\n").with_status_code(404)
        };
        // A scraper that hung up is no concern of the run.
        let _ = request.respond(response);
    }
}

/// A label value with `\`, `"` and newlines escaped.
fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn render(st: &State) -> String {
    let mut out = String::new();
    let mut family = |name: &str, kind: &str, help: &str, lines: Vec<String>| {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} {kind}");
        for l in lines {
            let _ = writeln!(out, "{l}");
        }
    };
    let each = |f: &dyn Fn(&str, &BackendMetrics) -> Vec<String>| -> Vec<String> {
        st.backends
            .iter()
            .flat_map(|(name, b)| f(&label(name), b))
            .collect()
    };
    let per_statement = |name: &'static str, pick: fn(&(u64, u64, u64)) -> u64| {
        each(&|backend, b| {
            let mut v = Vec::new();
            for (k, c) in b.statements.iter().enumerate() {
                let statement = label(st.statement_names.get(k).map_or("", String::as_str));
                v.push(format!(
                    "{name}{{backend=\"{backend}\",statement=\"{statement}\"}} {}",
                    pick(c)
                ));
            }
            v
        })
    };
    let requests = each(&|backend, b| {
        vec![format!(
            "doppio_requests_total{{backend=\"{backend}\"}} {}",
            b.requests
        )]
    });
    family(
        "doppio_requests_total",
        "counter",
        "Requests completed (successes and errors), in measured samples.",
        requests,
    );
    let errors = each(&|backend, b| {
        b.errors_by_kind
            .iter()
            .map(|(kind, n)| {
                format!(
                    "doppio_errors_total{{backend=\"{backend}\",kind=\"{}\"}} {n}",
                    label(kind)
                )
            })
            .collect()
    });
    family(
        "doppio_errors_total",
        "counter",
        "Requests that failed, by kind and by statement.",
        errors,
    );
    let rows = each(&|backend, b| {
        vec![format!(
            "doppio_rows_total{{backend=\"{backend}\"}} {}",
            b.rows
        )]
    });
    family(
        "doppio_rows_total",
        "counter",
        "Result rows of successful requests.",
        rows,
    );
    family(
        "doppio_statement_requests_total",
        "counter",
        "Requests completed, per run statement of the workload.",
        per_statement("doppio_statement_requests_total", |c| c.0),
    );
    family(
        "doppio_statement_errors_total",
        "counter",
        "Requests that failed, per run statement.",
        per_statement("doppio_statement_errors_total", |c| c.1),
    );
    family(
        "doppio_statement_rows_total",
        "counter",
        "Result rows, per run statement.",
        per_statement("doppio_statement_rows_total", |c| c.2),
    );
    family(
        "doppio_latency_seconds",
        "summary",
        "Latency from each request's due time: quantiles of the last sample, sum and count over the run.",
        each(&|backend, b| {
            let mut v: Vec<String> = QUANTILES
                .iter()
                .zip(b.quantiles)
                .map(|(q, ns)| {
                    format!(
                        "doppio_latency_seconds{{backend=\"{backend}\",quantile=\"{q}\"}} {}",
                        ns as f64 / 1e9
                    )
                })
                .collect();
            v.push(format!(
                "doppio_latency_seconds_sum{{backend=\"{backend}\"}} {}",
                b.latency_sum_ns / 1e9
            ));
            v.push(format!(
                "doppio_latency_seconds_count{{backend=\"{backend}\"}} {}",
                b.latency_count
            ));
            v
        }),
    );
    family(
        "doppio_client_cpu_seconds_total",
        "counter",
        "User and system CPU time of the bench process while the backend ran.",
        each(&|backend, b| {
            vec![format!(
                "doppio_client_cpu_seconds_total{{backend=\"{backend}\"}} {}",
                b.cpu.as_secs_f64()
            )]
        }),
    );
    family(
        "doppio_syscalls_total",
        "counter",
        "System calls of the backend's measured segments, added as each segment ends.",
        each(&|backend, b| {
            b.syscalls
                .map(|n| format!("doppio_syscalls_total{{backend=\"{backend}\"}} {n}"))
                .into_iter()
                .collect()
        }),
    );
    family(
        "doppio_samples_total",
        "counter",
        "Measured samples taken.",
        each(&|backend, b| {
            vec![format!(
                "doppio_samples_total{{backend=\"{backend}\"}} {}",
                b.samples
            )]
        }),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::statements::StatementCounts;
    use crate::stats::LatencyHistogram;

    #[test]
    fn the_text_format_has_each_family_once_with_escaped_labels() {
        let mut latency = LatencyHistogram::new();
        latency.record(1_000_000);
        latency.record(3_000_000);
        let s = Sample {
            index: 0,
            start: Duration::ZERO,
            duration: Duration::from_secs(1),
            requests: 3,
            rows: 5,
            errors: vec![("timeout", 1)],
            latency,
            service: LatencyHistogram::new(),
            mean_lateness_ns: 0.0,
            target_rps: None,
            statements: vec![StatementCounts {
                requests: 3,
                errors: 1,
                rows: 5,
                latency_sum_ns: 0,
            }],
            nodes: Vec::new(),
            tablet_misroutes: None,
        };
        let server =
            MetricsServer::start("127.0.0.1:0".parse().unwrap(), vec!["read \"k\"".into()])
                .unwrap();
        server.sample("doppio", &s);
        server.sample("doppio", &s);
        let text = render(&server.state.lock().unwrap());
        assert_eq!(
            text.matches("# TYPE doppio_requests_total counter").count(),
            1
        );
        assert!(
            text.contains("doppio_requests_total{backend=\"doppio\"} 6\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "doppio_statement_requests_total{backend=\"doppio\",statement=\"read \\\"k\\\"\"} 6\n"
            ),
            "{text}"
        );
        assert!(text.contains("doppio_errors_total{backend=\"doppio\",kind=\"timeout\"} 2\n"));
        assert!(text.contains("doppio_latency_seconds_count{backend=\"doppio\"} 4\n"));
        let sum: f64 = text
            .lines()
            .find_map(|l| l.strip_prefix("doppio_latency_seconds_sum{backend=\"doppio\"} "))
            .unwrap()
            .parse()
            .unwrap();
        assert!((sum - 0.008).abs() < 0.008 * 1e-3, "{sum}");
        assert!(!text.contains("doppio_syscalls_total{"), "none counted yet");
    }
}
