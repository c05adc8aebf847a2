//! A run's report as a file is a format (`SCHEMA_VERSION`): a report recorded by this doppio
//! reads and writes back byte for byte, so moving a figure's code (or renaming a field in the
//! struct that computes it) cannot change the JSON unnoticed. The fixture is a short run of
//! all three backends on the stub with `--anatomy` and `--waterfall 3`, so the optional
//! figures are in it; it is gzipped as perf/results keeps reports.
//!
//! When a change means to alter the format, it moves `SCHEMA_VERSION` with a note in
//! bench/REPORT.md and records the fixture again (bench/tests/fixtures/README.md says how).

use std::io::Read;
use std::path::Path;

use doppio_bench::report::Report;

use crate::support::scratch_dir;

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/report-v1.json.gz"
);

fn recorded() -> String {
    let bytes = std::fs::read(FIXTURE).unwrap();
    let mut text = String::new();
    flate2::read::GzDecoder::new(bytes.as_slice())
        .read_to_string(&mut text)
        .unwrap();
    text
}

#[test]
fn a_recorded_report_writes_back_byte_for_byte() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let report = Report::read(Path::new(FIXTURE)).unwrap();
    let out = scratch_dir("round_trip").join("again.json");
    report.write(&out).unwrap();
    let written = std::fs::read_to_string(&out).unwrap();
    let recorded = recorded();
    if written != recorded {
        let line = written
            .lines()
            .zip(recorded.lines())
            .position(|(w, r)| w != r)
            .unwrap_or(written.lines().count().min(recorded.lines().count()));
        panic!(
            "the report's JSON changed at line {}:\n  recorded: {:?}\n  written:  {:?}\n\
             (a format change moves SCHEMA_VERSION and records the fixture again)",
            line + 1,
            recorded.lines().nth(line),
            written.lines().nth(line),
        );
    }
    // The fixture holds what it says: every backend, the anatomy, and the waterfall where
    // there is one (doppio's stage hooks; scylla-rust-driver has none).
    assert_eq!(
        report
            .backends
            .keys()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        ["doppio", "doppio-uring", "scylla"]
    );
    for (name, b) in &report.backends {
        assert!(b.anatomy.is_some(), "{name}: no anatomy");
        assert_eq!(b.waterfall.is_some(), name != "scylla", "{name}: waterfall");
    }
}
