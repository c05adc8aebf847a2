//! The subcommands, one module each, siblings that `main` dispatches to (none imports another, but
//! `stress`, which runs `schema` and then `run`). Each is thin: its options checked and made
//! into an experiment (`crate::experiment`: rounds, segments, order, equal load, the load
//! curve, findmax), run, and its result handed to the report and its files. Below them, what
//! they share: `setup` (connection options, workload, `--cycles`, the files a command
//! writes). What ends a command is `crate::failure`; the SVG and Prometheus renderings are
//! `crate::render`'s.
//!
//! Commands: [`schema`], [`load`], [`run`], [`curve`] (every backend at several equal
//! loads: the load curve of cost per request), [`findmax`] (the saturation search),
//! [`show`] (a report as text), [`hdr`] (a report's histograms as an HdrHistogram log),
//! [`list`], [`merge`] (the reports of several loader machines combined), [`plot`]
//! (reports as SVG), [`sweep`] (runs at several concurrencies as a table and a plot),
//! [`cost`] (instructions and allocations per request under Valgrind, doppio beside
//! scylla-rust-driver), [`profile`] (a cassandra-stress user profile printed as the TOML
//! workload it runs as), [`stress`] (a cassandra-stress command line run: schema, then
//! `run`), [`nemesis`] (faults on a local cluster while acknowledged writes are recorded
//! and checked).

pub mod cost;
pub mod curve;
pub mod findmax;
pub mod hdr;
pub mod list;
pub mod load;
pub mod merge;
pub mod nemesis;
pub mod plot;
pub mod profile;
pub mod run;
pub mod schema;
pub(crate) mod setup;
pub mod show;
pub mod stress;
pub mod sweep;

pub use crate::failure::Failure;
