//! One test file at a time in a test binary that holds many.
//!
//! A crate's integration tests are one binary (`tests/it/main.rs`, a module per file). When
//! each file was its own binary, cargo ran the binaries one after the other: a file's tests
//! ran beside each other (libtest's threads) but never beside another file's. Tests that
//! measure rates, CPU, latency, memory or wake-ups were written for that. [`file_turn`] keeps
//! it: a test that holds its file's turn runs only beside tests of the same file, and a test
//! of another file waits until the last holder of the current turn has finished. libtest
//! starts tests in the order of their names, so a file's tests come together and the turns
//! pass file by file, as the binaries did.
//!
//! A test takes its turn first thing: `let _turn = file_turn(module_path!());`. The turn is
//! the module of the file (`it::stub_runs`; a module declared inside the file shares it). A
//! test that panics gives its turn back as it unwinds.

use std::sync::{Condvar, Mutex, PoisonError};

/// Whose turn it is and how many of its tests run.
struct Turn {
    file: Option<&'static str>,
    running: usize,
}

static TURN: Mutex<Turn> = Mutex::new(Turn {
    file: None,
    running: 0,
});
static RELEASED: Condvar = Condvar::new();

/// The turn of one test file, held while it lives (see the module documentation).
#[derive(Debug)]
#[must_use = "the turn ends when this is dropped"]
pub struct FileTurn {
    _private: (),
}

/// The module path's first two segments: `it::stub_runs::inner` -> `it::stub_runs`.
fn file_of(module_path: &'static str) -> &'static str {
    match module_path.match_indices("::").nth(1) {
        Some((i, _)) => &module_path[..i],
        None => module_path,
    }
}

/// Waits until no test of another file runs, then holds this file's turn: pass
/// `module_path!()`.
pub fn file_turn(module_path: &'static str) -> FileTurn {
    let file = file_of(module_path);
    let mut t = TURN.lock().unwrap_or_else(PoisonError::into_inner);
    while t.running > 0 && t.file != Some(file) {
        t = RELEASED.wait(t).unwrap_or_else(PoisonError::into_inner);
    }
    t.file = Some(file);
    t.running += 1;
    FileTurn { _private: () }
}

impl Drop for FileTurn {
    fn drop(&mut self) {
        let mut t = TURN.lock().unwrap_or_else(PoisonError::into_inner);
        t.running -= 1;
        if t.running == 0 {
            t.file = None;
            RELEASED.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[test]
    fn a_file_is_the_first_two_segments_of_the_module_path() {
        assert_eq!(file_of("it::stub_runs"), "it::stub_runs");
        assert_eq!(file_of("it::stub_runs::inner::deeper"), "it::stub_runs");
        assert_eq!(file_of("it"), "it");
    }

    #[test]
    fn tests_of_one_file_share_the_turn_and_another_file_waits_for_it() {
        static OTHERS_IN: AtomicUsize = AtomicUsize::new(0);
        let a = file_turn("turn_test::a");
        // Another test of the same file enters at once.
        let a2 = file_turn("turn_test::a::inner");
        let waiter = std::thread::spawn(|| {
            let _b = file_turn("turn_test::b");
            OTHERS_IN.fetch_add(1, Ordering::SeqCst);
        });
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(OTHERS_IN.load(Ordering::SeqCst), 0, "b ran beside a");
        drop(a);
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(
            OTHERS_IN.load(Ordering::SeqCst),
            0,
            "b ran beside a's second test"
        );
        drop(a2);
        waiter.join().unwrap_or_else(|_| panic!("b's thread"));
        assert_eq!(OTHERS_IN.load(Ordering::SeqCst), 1);
    }
}
