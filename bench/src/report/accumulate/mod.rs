//! [`BackendRun`]: what one backend produced over a run's measured segments, added up as
//! each ends, and made into its report entry at the end (summaries, per-second figures,
//! error margins).

use std::collections::BTreeMap;

use super::figure::client_cpu::ClientCpuFigures;
use super::figure::context_switches::ContextSwitchFigures;
use super::figure::driver_counts::DriverCountFigures;
use super::figure::hardware::HardwareFigures;
use super::figure::latency::LatencyFigures;
use super::figure::machines::MachineList;
use super::figure::memory::MemoryFigures;
use super::figure::rows::RowFigures;
use super::figure::samples::{SampleFigures, SampleReport};
use super::figure::scylla_shards::ScyllaShardFigures;
use super::figure::segments::SegmentList;
pub use super::figure::segments::SegmentMark;
use super::figure::server_cpu::ServerCpuFigures;
use super::figure::socket_batching::SocketBatchingFigures;
use super::figure::statements::{StatementFigures, StatementInfo};
use super::figure::syscalls::SyscallFigures;
use super::figure::throughput::ThroughputFigures;
use super::figure::uring::{IoUringFigures, UringEnterFigures};
use super::schema::{BackendReport, WaterfallReport, WhileParked};
use crate::backend::{add_counts, DriverCounters};
use crate::engine::drive::PhaseOutcome;
use crate::engine::spill::{SpilledSamples, StoredSample};
use crate::engine::statements::{merge_totals, StatementTotals};
use crate::probe::hw_counters::{HwCounts, Unavailable};
use crate::probe::process_cost::{ApartCost, ByKind, Cost, IoUringOps};
use crate::probe::server_cpu::ServerLoad;
use crate::stats::LatencyHistogram;

/// Raw overhead counters of a backend's measured segments.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct OverheadTotals {
    /// User CPU, seconds.
    pub user_s: f64,
    /// System CPU, seconds.
    pub sys_s: f64,
    /// Syscalls, if counted.
    pub syscalls: Option<u64>,
    /// Syscalls by kind, if counted.
    pub syscalls_by_kind: Option<ByKind<u64>>,
    /// io_uring operations, if counted.
    pub io_uring: Option<IoUringOps>,
    /// Voluntary + involuntary context switches.
    pub ctx_switches: u64,
    /// Voluntary context switches: a thread went to sleep waiting and was woken.
    pub sleeps: u64,
    /// Peak RSS, bytes.
    pub peak_rss: u64,
    /// Heap allocations, if counted.
    pub allocations: Option<u64>,
    /// CPU of the kernel's SQPOLL threads (part of `user_s` + `sys_s`), seconds, if the
    /// process had any.
    pub sqpoll_s: Option<f64>,
    /// CPU of the kernel's io-wq workers (part of `user_s` + `sys_s`), seconds, if the
    /// process had any.
    pub io_wq_s: Option<f64>,
    /// Hardware counts, if the machine has counters.
    pub hardware: Option<crate::probe::hw_counters::HwCounts>,
}

/// A segment's samples read back from their spill file. The spill is this process's own
/// unnamed file; should reading it fail, the samples from there on are left out and the
/// failure is said on stderr, so that the report of what was read is still written.
fn read_back(seg: &SpilledSamples) -> Vec<StoredSample> {
    let mut out = Vec::with_capacity(seg.len());
    match seg.iter() {
        Ok(samples) => {
            for s in samples {
                match s {
                    Ok(s) => out.push(s),
                    Err(e) => {
                        eprintln!("warning: samples could not be read back: {e}");
                        break;
                    }
                }
            }
        }
        Err(e) => eprintln!("warning: samples could not be read back: {e}"),
    }
    out
}

/// Everything one backend produced over its segments, before it becomes a report entry.
#[derive(Debug, Default)]
pub struct BackendRun {
    /// Samples by segment, in their spill files.
    pub segments: Vec<SpilledSamples>,
    /// Latency from the due time of every sample's successes, merged as segments end.
    pub latency: LatencyHistogram,
    /// Service time of every sample's successes.
    pub service: LatencyHistogram,
    /// Measured seconds per segment.
    pub elapsed_s: Vec<f64>,
    /// Wall-clock start of each segment, seconds since the Unix epoch.
    pub segment_starts_unix_s: Vec<Option<f64>>,
    /// First message per error kind.
    pub first_errors: BTreeMap<String, String>,
    /// Overhead totals over the measured segments.
    pub overhead: OverheadTotals,
    /// Why syscalls could not be counted.
    pub syscalls_unavailable: Option<String>,
    /// Why syscalls could not be counted by kind.
    pub syscall_kinds_unavailable: Option<String>,
    /// Why io_uring operations could not be counted.
    pub io_uring_unavailable: Option<String>,
    /// Why hardware counters could not be read.
    pub hardware_unavailable: Option<String>,
    /// `--waterfall`: the timed requests' stages over the measured segments.
    pub waterfall: Option<crate::engine::waterfall::Waterfall>,
    /// With a rate: how late each iteration was sent, over the measured segments.
    pub send_lateness: Option<crate::engine::lateness::SendLateness>,
    /// Driver counters over the measured segments (doppio).
    pub counters: Option<crate::backend::DriverCounters>,
    /// Whether the samples' rows were counted (else the report's row figures are `null`).
    pub rows_counted: bool,
    /// The workload's run statements, in order (names the entries of `statements`).
    pub statement_info: Vec<StatementInfo>,
    /// Per run statement (by index): its record over the measured segments.
    pub statements: Vec<StatementTotals>,
    /// Per measured segment, in order: its round, place and cost ([`Self::mark_segment`];
    /// the report's `segments` are these with the segment's requests and time).
    pub marks: Vec<SegmentMark>,
    /// What its threads did while other backends' segments were measured: the other
    /// segments it sat parked through, and their sum.
    pub parked: Option<(u64, ApartCost)>,
}

/// Adds a segment's count `part` to `total`. A count missing from any segment (`why` says
/// why) is missing from the total, with the reason in `unavailable`: a partial sum would
/// pass for the whole.
fn add_count<T>(
    total: &mut Option<T>,
    unavailable: &mut Option<String>,
    part: Option<T>,
    why: Option<&String>,
    add: impl FnOnce(T, T) -> T,
) {
    match part {
        Some(p) if unavailable.is_none() => {
            *total = Some(match total.take() {
                Some(t) => add(t, p),
                None => p,
            });
        }
        Some(_) => {}
        None => {
            *unavailable = Some(why.cloned().unwrap_or_else(|| "not counted".into()));
            *total = None;
        }
    }
}

impl BackendRun {
    /// The run with `segments` of in-memory samples stored as a phase stores them (tests
    /// build runs from samples).
    #[cfg(test)]
    pub(crate) fn with_samples(
        mut self,
        segments: Vec<Vec<crate::engine::collect::Sample>>,
    ) -> Self {
        self.segments = segments
            .into_iter()
            .map(|seg| {
                let mut spilled = SpilledSamples::new().unwrap_or_else(|e| panic!("spill: {e}"));
                for s in seg {
                    self.latency.merge(&s.latency);
                    self.service.merge(&s.service);
                    spilled.push(&s).unwrap_or_else(|e| panic!("store: {e}"));
                }
                spilled
            })
            .collect();
        self
    }
    /// Adds the driver's counters over a measured segment (`after` less `before`), and the
    /// requests each node was sent in it (from the samples: the counters' difference would
    /// lose a node that left during the segment, as its counters leave with it).
    pub(crate) fn add_counters(
        &mut self,
        before: &DriverCounters,
        after: &DriverCounters,
        requests_by_node: &BTreeMap<String, u64>,
    ) {
        let c = self.counters.get_or_insert_with(Default::default);
        c.requests += after.requests.saturating_sub(before.requests);
        c.flushes += after.flushes.saturating_sub(before.flushes);
        c.reads += after.reads.saturating_sub(before.reads);
        c.bytes_written += after.bytes_written.saturating_sub(before.bytes_written);
        c.bytes_read += after.bytes_read.saturating_sub(before.bytes_read);
        c.retries += after.retries.saturating_sub(before.retries);
        if let (Some(b), Some(a)) = (before.uring_enters, after.uring_enters) {
            c.uring_enters = Some(c.uring_enters.unwrap_or_default().plus(&a.since(&b)));
        }
        c.reprepares += after.reprepares.saturating_sub(before.reprepares);
        c.tablet_misroutes += after
            .tablet_misroutes
            .saturating_sub(before.tablet_misroutes);
        for (node, n) in requests_by_node {
            *c.nodes.entry(node.clone()).or_default() += n;
        }
        for (node, counts) in &after.scylla_shards {
            let was = before.scylla_shards.get(node);
            let delta: Vec<u64> = counts
                .iter()
                .enumerate()
                .map(|(i, n)| n.saturating_sub(was.and_then(|w| w.get(i)).copied().unwrap_or(0)))
                .collect();
            add_counts(c.scylla_shards.entry(node.clone()).or_default(), &delta);
        }
    }

    /// Adds a measured segment: its samples, latencies, statements, time and first errors.
    pub(crate) fn add_phase(&mut self, outcome: PhaseOutcome) {
        for (k, m) in outcome.first_errors {
            self.first_errors.entry(k.to_owned()).or_insert(m);
        }
        self.elapsed_s.push(outcome.elapsed.as_secs_f64());
        self.segment_starts_unix_s.push(
            outcome
                .started_at
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|d| d.as_secs_f64()),
        );
        self.latency.merge(&outcome.latency);
        self.service.merge(&outcome.service);
        self.segments.push(outcome.samples);
        merge_totals(&mut self.statements, &outcome.statements);
        if let Some(w) = &outcome.waterfall {
            self.waterfall.get_or_insert_with(Default::default).merge(w);
        }
        if let Some(l) = &outcome.send_lateness {
            self.send_lateness
                .get_or_insert_with(Default::default)
                .merge(l);
        }
    }

    /// Marks the segment [`Self::add_phase`] adds as the `position`th of `round`, with
    /// what it cost (its own figures in the report's `segments`),
    /// with the node's `server` load when it was measured.
    pub(crate) fn mark_segment(
        &mut self,
        round: usize,
        position: usize,
        cost: Option<&Cost>,
        server: Option<ServerLoad>,
    ) {
        self.marks.push(SegmentMark {
            round,
            position,
            cpu_s: cost.map(|c| (c.user + c.sys).as_secs_f64()),
            syscalls: cost.and_then(|c| c.syscalls),
            server,
        });
    }

    /// Adds what this backend's threads did, parked, over another backend's segment.
    pub(crate) fn add_parked(&mut self, apart: &ApartCost) {
        self.parked = Some(match self.parked {
            Some((n, sum)) => (n + 1, sum.plus(apart)),
            None => (1, *apart),
        });
    }

    /// Adds what a measured segment cost.
    pub(crate) fn add_cost(&mut self, cost: &Cost) {
        let o = &mut self.overhead;
        o.user_s += cost.user.as_secs_f64();
        o.sys_s += cost.sys.as_secs_f64();
        o.ctx_switches += cost.voluntary_ctx_switches + cost.involuntary_ctx_switches;
        o.sleeps += cost.voluntary_ctx_switches;
        o.peak_rss = o.peak_rss.max(cost.peak_rss_bytes);
        if let Some(n) = cost.allocations {
            o.allocations = Some(o.allocations.unwrap_or(0) + n);
        }
        if let Some(d) = cost.sqpoll {
            o.sqpoll_s = Some(o.sqpoll_s.unwrap_or(0.0) + d.as_secs_f64());
        }
        if let Some(d) = cost.io_wq {
            o.io_wq_s = Some(o.io_wq_s.unwrap_or(0.0) + d.as_secs_f64());
        }
        add_count(
            &mut o.syscalls,
            &mut self.syscalls_unavailable,
            cost.syscalls,
            cost.syscalls_unavailable.as_ref(),
            |a, b| a + b,
        );
        add_count(
            &mut o.syscalls_by_kind,
            &mut self.syscall_kinds_unavailable,
            cost.syscalls_by_kind,
            cost.syscall_kinds_unavailable.as_ref(),
            |a, b| a.plus(&b),
        );
        add_count(
            &mut o.io_uring,
            &mut self.io_uring_unavailable,
            cost.io_uring,
            cost.io_uring_unavailable.as_ref(),
            |a, b| a.plus(&b),
        );
    }

    /// Adds a measured segment's hardware counts, or why there were none.
    pub(crate) fn add_hardware(&mut self, counted: Result<HwCounts, Unavailable>) {
        let (part, why) = match counted {
            Ok(c) => (Some(c), None),
            Err(Unavailable(why)) => (None, Some(why)),
        };
        add_count(
            &mut self.overhead.hardware,
            &mut self.hardware_unavailable,
            part,
            why.as_ref(),
            |mut a, b| {
                a.add(&b);
                a
            },
        );
    }

    /// The report entry for `driver`.
    pub(crate) fn report(&self, driver: &str) -> BackendReport {
        let (latency, service) = (&self.latency, &self.service);
        let mut requests = 0u64;
        let mut rows = 0u64;
        let mut errors_by_kind: BTreeMap<String, u64> = BTreeMap::new();
        let mut samples = Vec::new();
        let mut throughputs = Vec::new();
        let mut means = Vec::new();
        let mut service_means = Vec::new();
        let mut lateness = (0.0, 0u64);
        let mut segment_requests = Vec::with_capacity(self.segments.len());
        for (segment, seg) in self.segments.iter().enumerate() {
            let mut first_duration = None;
            segment_requests.push(0u64);
            for s in read_back(seg) {
                let first = *first_duration.get_or_insert(s.duration.as_secs_f64());
                requests += s.requests;
                segment_requests[segment] += s.requests;
                rows += s.rows;
                for (k, n) in &s.errors {
                    *errors_by_kind.entry(k.clone()).or_default() += n;
                }
                lateness.0 += s.mean_lateness_ns * s.requests as f64;
                lateness.1 += s.requests;
                // Partial last intervals (under half an interval) would skew the per-sample
                // statistics; they still count in the totals.
                let full = s.duration.as_secs_f64() > 0.0
                    && (samples.is_empty() || s.duration.as_secs_f64() >= 0.5 * first);
                if full {
                    throughputs.push(s.throughput());
                    if s.latency.count > 0 {
                        means.push(s.latency.mean);
                        service_means.push(s.service.mean);
                    }
                }
                let start = self.segment_starts_unix_s.get(segment).copied().flatten();
                samples.push(SampleReport::of(
                    &s,
                    segment,
                    start,
                    self.statement_info.len(),
                ));
            }
        }
        let elapsed: f64 = self.elapsed_s.iter().sum();
        let o = &self.overhead;
        let statements = StatementFigures::of(
            &self.statement_info,
            &self.statements,
            &samples,
            elapsed,
            requests,
            self.rows_counted,
        );
        let segments = SegmentList::of(&self.marks, &segment_requests, &self.elapsed_s);
        let server_cpu = ServerCpuFigures::of(
            self.marks
                .iter()
                .map(|m| m.server)
                .zip(self.elapsed_s.iter().copied()),
            segments.saturated(),
            requests,
            elapsed,
        );
        BackendReport {
            driver: driver.to_owned(),
            throughput: ThroughputFigures::of(
                requests,
                elapsed,
                &throughputs,
                errors_by_kind,
                self.first_errors.clone(),
            ),
            client_cpu: ClientCpuFigures::of(o.user_s, o.sys_s, o.sqpoll_s, o.io_wq_s, requests),
            syscalls: SyscallFigures::of(
                o.syscalls,
                o.syscalls_by_kind,
                &self.syscalls_unavailable,
                &self.syscall_kinds_unavailable,
                requests,
            ),
            io_uring: IoUringFigures::of(o.io_uring, &self.io_uring_unavailable, requests),
            hardware: HardwareFigures::of(o.hardware, &self.hardware_unavailable, requests),
            context_switches: ContextSwitchFigures::of(o.ctx_switches, o.sleeps, requests),
            memory: MemoryFigures::of(o.allocations, o.peak_rss, requests),
            socket_batching: self
                .counters
                .as_ref()
                .map_or_else(SocketBatchingFigures::default, |c| {
                    SocketBatchingFigures::of(c.requests, c.flushes, c.reads)
                }),
            driver_counts: DriverCountFigures::of(self.counters.as_ref(), elapsed),
            enters: UringEnterFigures::of(
                self.counters.as_ref().and_then(|c| c.uring_enters),
                requests,
            ),
            while_parked: self
                .parked
                .map(|(segments, a)| WhileParked::of(segments, &a)),
            scylla_shards: ScyllaShardFigures::of(self.counters.as_ref().map(|c| &c.scylla_shards)),
            latency: LatencyFigures::of(
                latency,
                &means,
                service,
                &service_means,
                lateness,
                self.send_lateness.as_ref(),
            ),
            samples: SampleFigures::of(samples, latency, service),
            result_rows: RowFigures::of(self.rows_counted, rows, elapsed, o.user_s + o.sys_s),
            machines: MachineList::of(),
            statements,
            segments,
            server_cpu,
            // Filled in by the run once its stacks are folded.
            anatomy: None,
            waterfall: self.waterfall.as_ref().map(WaterfallReport::of),
        }
    }
}

#[cfg(test)]
mod tests;
