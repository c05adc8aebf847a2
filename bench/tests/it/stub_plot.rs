//! `doppio plot` on reports of runs against the stub (in this process): the SVG has its two
//! panels' axes (time, throughput, latency), one line per backend in the throughput panel
//! and one per backend and percentile in the latency panel, each named in a legend; a
//! merged report of two loaders plots as one report; a bad percentile is a usage error.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use crate::support;
use support::{doppio, scratch_dir, svg_lines_and_texts};

fn run(addr: &str, out: &std::path::Path, extra: &[&str]) {
    let mut args = vec![
        "run",
        "-w",
        "empty",
        addr,
        "-d",
        "4s",
        "--warmup",
        "0s",
        "-p",
        "8",
        "-r",
        "2000",
        "-q",
        "-o",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    assert!(doppio(&args).status.success());
}

#[test]
fn throughput_and_percentiles_over_time_one_line_per_backend_and_percentile() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let stub = doppio_stub::Stub::start(doppio_stub::StubConfig::default()).unwrap();
    let addr = stub.addr().to_string();
    let dir = scratch_dir("plot");
    let two = dir.join("two.json");
    run(&addr, &two, &["--driver", "doppio,doppio-uring"]);
    let svg = dir.join("two.svg");
    let out = doppio(&[
        "plot",
        two.to_str().unwrap(),
        "-o",
        svg.to_str().unwrap(),
        "--percentiles",
        "50,99,99.9",
    ]);
    assert!(out.status.success());
    let (lines, texts) = svg_lines_and_texts(&std::fs::read_to_string(&svg).unwrap());
    // Solid: 2 throughput lines and each backend's highest percentile (p99.9); p99 is
    // dashed and p50 dotted (short pieces). The legend names all 2 + 2 x 3.
    assert!(lines >= 2 + 2, "{lines}: {texts:?}");
    for t in ["time [s]", "throughput [req/s]"] {
        assert_eq!(
            texts.iter().filter(|x| *x == t).count(),
            if t == "time [s]" { 2 } else { 1 },
            "{t}: {texts:?}"
        );
    }
    // Latency in the unit its range reads best in (the stub answers in microseconds).
    assert_eq!(
        texts.iter().filter(|x| x.starts_with("latency [")).count(),
        1,
        "{texts:?}"
    );
    for backend in ["doppio", "doppio-uring"] {
        for p in ["", " p50", " p99", " p99.9"] {
            let t = format!("{backend}{p}");
            assert!(texts.contains(&t), "legend {t}: {texts:?}");
        }
    }
    // Axes in SI: no tick label is a long raw number such as `100000.0`.
    assert!(
        !texts
            .iter()
            .any(|t| t.len() >= 5 && t.chars().all(|c| c.is_ascii_digit() || c == '.')),
        "{texts:?}"
    );

    // Two loaders at once, merged: plotted as one report.
    let (a, b) = (dir.join("m1.json"), dir.join("m2.json"));
    std::thread::scope(|s| {
        s.spawn(|| run(&addr, &a, &["--cycles", "0..1G"]));
        s.spawn(|| run(&addr, &b, &["--cycles", "1G..2G"]));
    });
    let merged = dir.join("merged.json");
    assert!(doppio(&[
        "merge",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "-o",
        merged.to_str().unwrap()
    ])
    .status
    .success());
    let msvg = dir.join("merged.svg");
    assert!(doppio(&[
        "plot",
        merged.to_str().unwrap(),
        "-o",
        msvg.to_str().unwrap()
    ])
    .status
    .success());
    let (lines, texts) = svg_lines_and_texts(&std::fs::read_to_string(&msvg).unwrap());
    // One backend: its throughput and p99 solid, its p50 dashed.
    assert!(lines >= 2, "one backend, p50 and p99: {lines}: {texts:?}");
    for t in ["doppio", "doppio p50", "doppio p99"] {
        assert!(texts.iter().any(|x| x == t), "legend {t}: {texts:?}");
    }

    let bad = doppio(&[
        "plot",
        two.to_str().unwrap(),
        "-o",
        svg.to_str().unwrap(),
        "--percentiles",
        "p99",
    ]);
    support::assert_input_error(&bad, &["`p99`"]);
}
