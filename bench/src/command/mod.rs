//! The subcommands, one module each, siblings that `main` dispatches to (none imports another, but
//! `stress`, which runs `schema` and then `run`). Below them, what they share and import:
//! [`failure`] (what ends a command, and its exit code), [`chart`] (how the charts of `plot`,
//! `sweep` and `curve` look), [`setup`] (connection options, workload, `--cycles`, the files a
//! command writes), [`measure`] (the warm-then-measure routine of `run`, `findmax` and `curve`, and
//! the observers that attach to it), [`rounds`] (the rounds of `run` and `curve`: backends
//! connected once, the node warmed, capacities probed, rounds of segments at a rate) and
//! [`round_report`] (the run report those rounds make), which import no command.
//!
//! Commands: [`schema`], [`load`], [`run`], [`curve`] (every backend at several equal
//! loads: the load curve of cost per request), [`findmax`] (the saturation search),
//! [`show`] (a report as text), [`hdr`] (a report's histograms as an HdrHistogram log),
//! [`list`], [`merge`] (the reports of several loader machines combined), [`plot`]
//! (reports as SVG), [`sweep`] (runs at several concurrencies as a table and a plot),
//! [`cost`] (instructions and allocations per request under Valgrind, doppio beside
//! scylla-rust-driver), [`profile`] (a cassandra-stress user profile printed as the TOML
//! workload it runs as), [`stress`] (a cassandra-stress command line run: schema, then
//! `run`).

pub mod chart;
pub mod cost;
pub mod curve;
pub mod failure;
pub mod findmax;
pub mod hdr;
pub mod list;
pub mod load;
pub mod measure;
pub mod merge;
pub mod plot;
pub mod profile;
pub mod round_report;
pub mod rounds;
pub mod run;
pub mod schema;
pub mod setup;
pub mod show;
pub mod stress;
pub mod sweep;

pub use failure::Failure;
