//! The subcommands, one module each, siblings that `main` dispatches to (none imports
//! another). Below them, what they share and import: [`failure`] (what ends a command, and
//! its exit code), [`chart`] (how the charts of `plot` and `sweep` look) and [`setup`]
//! (connection options, workload, `--cycles`, the files a command writes) and [`measure`] (the warm-then-measure routine of `run` and `findmax`,
//! and the observers that attach to it), which import no command.
//!
//! Commands: [`schema`], [`load`], [`run`], [`findmax`] (the saturation search), [`show`]
//! (a report as text), [`hdr`] (a report's histograms as an HdrHistogram log), [`list`],
//! [`merge`] (the reports of several loader machines combined), [`plot`] (reports as SVG),
//! [`sweep`] (runs at several concurrencies as a table and a plot).

pub mod chart;
pub mod failure;
pub mod findmax;
pub mod hdr;
pub mod list;
pub mod load;
pub mod measure;
pub mod merge;
pub mod plot;
pub mod run;
pub mod schema;
pub mod setup;
pub mod show;
pub mod sweep;

pub use failure::Failure;
