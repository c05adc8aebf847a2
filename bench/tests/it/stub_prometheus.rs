//! `--prometheus ADDR` against the stub (in this process): while the run goes, `/metrics`
//! answers in Prometheus's text format with every family and the backend and statement
//! labels; its counters only grow between two scrapes; other paths get 404. Scraped with a
//! plain HTTP/1.1 GET over a TcpStream.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support;
use support::scratch_dir;

/// Status code and body of `GET path`.
fn get(addr: &str, path: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let status = text.split_whitespace().nth(1).unwrap().parse().unwrap();
    let body = text
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_owned();
    (status, body)
}

/// Sample lines (`name{labels} value`) of a scrape.
fn samples(body: &str) -> BTreeMap<String, f64> {
    body.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (k, v) = l.rsplit_once(' ').unwrap();
            (k.to_owned(), v.parse().unwrap())
        })
        .collect()
}

#[test]
fn metrics_are_served_during_the_run_and_counters_grow() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let stub = doppio_stub::Stub::start(doppio_stub::StubConfig::default()).unwrap();
    let addr = stub.addr().to_string();
    let report = scratch_dir("prometheus").join("r.json");
    let mut child = Command::new(env!("CARGO_BIN_EXE_doppio"))
        .args([
            "run",
            "-w",
            "empty",
            &addr,
            "--driver",
            "doppio,doppio-uring",
            "-d",
            "12s",
            "--warmup",
            "0s",
            "-p",
            "16",
            "-r",
            "5000",
            "-q",
            "--prometheus",
            "127.0.0.1:0",
            "-o",
            report.to_str().unwrap(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let endpoint = line
        .trim()
        .strip_prefix("prometheus metrics on http://")
        .and_then(|l| l.strip_suffix("/metrics"))
        .unwrap_or_else(|| panic!("the address line: {line:?}"))
        .to_owned();
    // Into the second backend's first segment (four of 3 s: A B A B).
    let start = Instant::now();
    std::thread::sleep(Duration::from_millis(4500));
    let (status, first) = get(&endpoint, "/metrics");
    assert_eq!(status, 200);
    std::thread::sleep(Duration::from_secs(3));
    let (_, second) = get(&endpoint, "/metrics");
    let (missing, _) = get(&endpoint, "/other");
    assert!(
        start.elapsed() < Duration::from_secs(12),
        "scraped during the run"
    );
    assert_eq!(missing, 404);
    let status = child.wait().unwrap();
    assert!(status.success());
    eprintln!("{second}");
    for family in [
        "doppio_requests_total",
        "doppio_errors_total",
        "doppio_rows_total",
        "doppio_statement_requests_total",
        "doppio_latency_seconds",
        "doppio_client_cpu_seconds_total",
        "doppio_samples_total",
    ] {
        let kind = if family == "doppio_latency_seconds" {
            "summary"
        } else {
            "counter"
        };
        assert!(
            second.contains(&format!("# TYPE {family} {kind}\n")),
            "{family} in the scrape"
        );
    }
    let (a, b) = (samples(&first), samples(&second));
    for backend in ["doppio", "doppio-uring"] {
        let key = format!("doppio_requests_total{{backend=\"{backend}\"}}");
        assert!(b[&key] > 0.0, "{backend} counted");
        assert!(
            b.contains_key(&format!(
                "doppio_statement_requests_total{{backend=\"{backend}\",statement=\"empty\"}}"
            )),
            "{backend}: per statement"
        );
        assert!(
            b.contains_key(&format!(
                "doppio_latency_seconds{{backend=\"{backend}\",quantile=\"0.99\"}}"
            )),
            "{backend}: p99"
        );
    }
    // Counters never go back; some moved between the two scrapes.
    let mut grew = 0;
    for (k, v) in &a {
        if k.contains("_total") || k.contains("_count") || k.contains("_sum") {
            let later = b.get(k).copied().unwrap_or(f64::NAN);
            assert!(later >= *v, "{k}: {v} then {later}");
            if later > *v {
                grew += 1;
            }
        }
    }
    assert!(grew > 0, "the run went on between the scrapes");
}
