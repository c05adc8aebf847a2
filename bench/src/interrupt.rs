//! Ctrl-C (SIGINT) and SIGTERM during `run`, `load`, `findmax` or `curve` (other commands
//! keep the default: a signal ends them): the first asks the run to stop (each fiber ends
//! after the request it has in flight, which finishes or times out; the phase's samples are
//! kept and the report is written with `fatal_error: "interrupted"`, exit code 130); a
//! second exits at once with code 130.
//!
//! The flag is one process-wide atomic: the engine reads it (a relaxed load) once per
//! iteration of each fiber, the price of stopping without waiting for the phase's end.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// The exit code of an interrupted command (128 + SIGINT, as shells report it).
pub(crate) const EXIT_CODE: u8 = 130;

static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();

fn flag() -> &'static Arc<AtomicBool> {
    FLAG.get_or_init(|| Arc::new(AtomicBool::new(false)))
}

/// Installs the handlers of SIGINT and SIGTERM (once per process).
pub fn install() -> std::io::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    use signal_hook::flag as sig;
    for signal in [SIGINT, SIGTERM] {
        // Registered first, so it sees the flag as it was before this signal: set means a
        // second signal, which exits at once.
        sig::register_conditional_shutdown(signal, i32::from(EXIT_CODE), flag().clone())?;
        sig::register(signal, flag().clone())?;
    }
    Ok(())
}

/// Whether a stop was asked for.
#[inline]
pub(crate) fn interrupted() -> bool {
    FLAG.get().is_some_and(|f| f.load(Ordering::Relaxed))
}
