//! `doppio`: the benchmark binary.
//!
//! Placeholder until the bench issue lands: it builds, so that the workspace and the README's
//! layout are real, and it says plainly that it cannot run a benchmark yet.

use std::process::ExitCode;

fn main() -> ExitCode {
    eprintln!(
        "doppio {}: the benchmark engine is not built yet (see the bench issue); \
         nothing was run",
        env!("CARGO_PKG_VERSION")
    );
    ExitCode::from(2)
}
