//! `doppio-stub`: a loopback CQL server for overhead research and fault injection.
//!
//! Placeholder until the perf issue lands: it builds and says plainly that it serves nothing.

use std::process::ExitCode;

fn main() -> ExitCode {
    eprintln!("doppio-stub: not built yet (see the perf issue); nothing is listening");
    ExitCode::from(2)
}
