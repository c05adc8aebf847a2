//! Every input kept in the fuzz corpora (`protocol-tests/fuzz/corpus/<target>/`: the hand-made
//! seeds and the coverage-minimised sets the fuzz runs grew) replayed through the same checks
//! the fuzz targets run (`protocol_tests::fuzz_checks`), on stable, on each test run: a
//! change to doppio-proto that panics on any of them, or breaks a re-encoding, fails here.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is a finding

use std::path::{Path, PathBuf};

use protocol_tests::fuzz_checks as checks;

fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect()
}

/// Runs `check` on each input of `target`'s corpus, naming the file that panicked.
fn replay(target: &str, check: fn(&[u8]), at_least: usize) {
    let inputs = corpus(target);
    assert!(
        inputs.len() >= at_least,
        "{target}: {} inputs, expected at least {at_least}",
        inputs.len()
    );
    for (path, bytes) in &inputs {
        if std::panic::catch_unwind(|| check(bytes)).is_err() {
            panic!("{target}: {} fails its check", path.display());
        }
    }
}

#[test]
fn the_frame_request_corpus_decodes_without_a_panic() {
    replay("frame_request", checks::frame_request, 500);
}

#[test]
fn the_frame_response_corpus_decodes_and_re_encodes() {
    replay("frame_response", checks::frame_response, 900);
}

#[test]
fn the_rows_corpus_is_walked_without_a_panic() {
    replay("rows", checks::rows, 800);
}

#[test]
fn the_segments_corpus_is_unwrapped_without_a_panic() {
    replay("segments", checks::segments, 12);
}
