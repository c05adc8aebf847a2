//! Reports: the JSON document researchers script against (fields documented in
//! `bench/REPORT.md`; `schema_version` changes when a field changes meaning or goes away),
//! and what every rendering of it reads (the renderings themselves are `render`'s).
//!
//! Children: [`schema`], the run report's JSON fields; [`accumulate`], a backend's
//! segments added up into its report entry; [`time`], RFC 3339 times; [`mod@file`], a report
//! read and written, and [`file::ReportError`]; [`findmax`], the report of `doppio
//! findmax` (its text table is `render`'s); [`merge`], the reports of one
//! test run made on several loader machines combined into one (`doppio merge`);
//! [`verdict`], the VERDICT of a run of several backends (each figure's ratio paired by
//! round, with its interval and p-value); [`lateness`], the send lateness of a paced run,
//! and whether a backend kept its grid; [`curve`], the load curve of `doppio curve` made
//! from the reports of its points (its markdown is `render`'s); [`figure`], the
//! figures a backend's entry is built of (throughput, latency, client CPU, syscalls,
//! io_uring, hardware counters, context switches, memory, socket batching, driver counts,
//! rows, ScyllaDB shards, server CPU, anatomy, waterfall, while parked, samples and
//! histograms, statements, segments, machines), each with its
//! computation, its pooling in a merge and its text rows; [`pool`], the arithmetic they
//! share (per request, pooled over machines); [`summary`], a latency distribution's
//! summary; [`cell`], a cell and a figure's row of the text tables; [`connection_shape`],
//! the connections each backend held by node and shard, and whether the backends held the
//! same; [`cost`], the table
//! of `doppio cost` (instructions and allocations per request) and its `--check` gate.
//!
//! Invariants: a report never contains a password; every backend entry carries the same
//! fields whether or not the run hit errors; a field that could not be measured is `null`
//! with the reason beside it, never zero.

pub mod accumulate;
pub mod cell;
pub mod connection_shape;
pub mod cost;
pub mod curve;
pub mod figure;
pub mod file;
pub mod findmax;
pub mod lateness;
pub mod merge;
pub mod pool;
pub mod schema;
pub mod summary;
pub mod time;
pub mod verdict;

pub use accumulate::{BackendRun, OverheadTotals};
pub use figure::hardware::HardwarePerReq;
pub use figure::uring::UringEntersPerReq;
pub use schema::{
    AnatomyReport, BackendReport, CyclesConfig, EqualLoad, LatencySummary, Report, RunConfig,
    SampleReport, SampleStatement, SegmentFigures, SqPollConfig, StageReport, StatementInfo,
    StatementReport, WaterfallReport, WhileParked, WorkloadInfo, SCHEMA_VERSION,
};
pub use time::{now_rfc3339, rfc3339_of_unix, rfc3339_to_unix};
