//! `--anatomy` against the stub: every backend's client CPU per request split by layer, on
//! both of doppio's runtimes and scylla-rust-driver. The layers add up to the measured CPU,
//! the samples stand for about what was measured, each backend's own code is found where it
//! lives (doppio's driver and codec, scylla's), the kernel's network stack shows, and the
//! text report has its table. A `--flamegraph` run of two backends also draws their
//! differential flamegraph per request, and `doppio show NEW BASE --flamediff` draws one of
//! two reports (refused, with the reason, for reports without stacks or without a baseline). `perf` with software events is installed by
//! `scripts/test.sh`.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::process::Command;

use crate::support;
use support::{json, scratch_dir};

const LAYERS: [&str; 12] = [
    "codec",
    "driver",
    "runtime",
    "allocator",
    "kernel_io_uring",
    "kernel_net",
    "kernel_syscall",
    "kernel_scheduler",
    "kernel_other",
    "adapter",
    "bench",
    "other",
];

#[test]
fn anatomy_splits_each_backends_cpu_by_layer() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let stub = doppio_stub::Stub::start(doppio_stub::StubConfig::default()).unwrap();
    let dir = scratch_dir("anatomy");
    let report = dir.join("r.json");
    let out = Command::new(env!("CARGO_BIN_EXE_doppio"))
        .args(["run", "-w", "empty", &stub.addr().to_string(), "-d", "1s"])
        .args([
            "--driver",
            "doppio,doppio-uring,scylla",
            "-p",
            "64",
            "-t",
            "1",
        ])
        .args([
            "--warmup",
            "0s",
            "-q",
            "--anatomy",
            "-o",
            report.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}\n{text}");
    let j = json(&report);
    for driver in ["doppio", "doppio-uring", "scylla"] {
        let b = &j["backends"][driver];
        let cpu = b["cpu_us_per_req"].as_f64().unwrap();
        let a = &b["anatomy"];
        let layers = a["us_per_req"].as_object().unwrap();
        for name in layers.keys() {
            assert!(LAYERS.contains(&name.as_str()), "{driver}: {name}");
        }
        let layer = |name: &str| layers.get(name).and_then(|v| v.as_f64()).unwrap_or(0.0);
        let sum: f64 = layers.values().map(|v| v.as_f64().unwrap()).sum();
        assert!(
            (sum - cpu).abs() <= 1e-9 * cpu.max(1.0),
            "{driver}: {sum} vs {cpu}"
        );
        // The samples stand for about the CPU measured (perf samples every thread of the
        // process that the bench's rusage counts).
        let sampled = a["sampled_cpu_us_per_req"].as_f64().unwrap();
        assert!(
            sampled > 0.5 * cpu && sampled < 1.5 * cpu,
            "{driver}: sampled {sampled} of {cpu}"
        );
        // Each driver's own code, its encoding, the loopback's TCP, the bench: all seen.
        for name in ["driver", "codec", "kernel_net", "bench"] {
            assert!(layer(name) > 0.0, "{driver}: no {name}: {layers:?}");
        }
        // Unnamed frames are few: the rules name what the bench runs.
        assert!(layer("other") < 0.1 * cpu, "{driver}: {layers:?}");
        assert!(a["sampling"].as_str().unwrap().contains("-F 499"), "{a}");
        assert!(a["recorder_cpu_us_per_req"].as_f64().unwrap() > 0.0, "{a}");
    }
    // doppio on its own runtime submits through io_uring; scylla-rust-driver does not.
    let uring = |d: &str| {
        j["backends"][d]["anatomy"]["us_per_req"]["kernel_io_uring"]
            .as_f64()
            .unwrap_or(0.0)
    };
    assert!(uring("doppio-uring") > uring("scylla"), "{j}");
    // The text report's table, every layer a row, after OVERHEAD.
    let table = text
        .split("ANATOMY [us/req]")
        .nth(1)
        .unwrap_or_else(|| panic!("{text}"));
    assert!(text.find("OVERHEAD").unwrap() < text.find("ANATOMY").unwrap());
    for row in [
        "  codec",
        "  kernel io_uring",
        "  bench adapter",
        "sampled CPU",
    ] {
        assert!(table.contains(row), "{row}: {table}");
    }
    assert!(j["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w.as_str().unwrap().starts_with("sampled run (perf record")));
    // --anatomy keeps no stacks: a differential flamegraph of it is refused, and why.
    let r = report.to_str().unwrap();
    let svg = dir.join("d.svg");
    let out = Command::new(env!("CARGO_BIN_EXE_doppio"))
        .args(["show", r, r, "--flamediff", svg.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("has no flamegraph stacks to compare"), "{err}");
    assert!(!svg.exists());
}

#[test]
fn a_flamegraph_run_of_two_backends_draws_their_difference_per_request() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let stub = doppio_stub::Stub::start(doppio_stub::StubConfig::default()).unwrap();
    let dir = scratch_dir("flame-diff");
    let report = dir.join("r.json");
    let prefix = dir.join("f");
    let out = Command::new(env!("CARGO_BIN_EXE_doppio"))
        .args(["run", "-w", "empty", &stub.addr().to_string(), "-d", "1s"])
        .args(["--driver", "doppio-uring,scylla", "-p", "16", "-t", "1"])
        .args(["--warmup", "0s", "-q", "-o", report.to_str().unwrap()])
        .args(["--flamegraph", prefix.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    for file in [
        "f-doppio-uring.svg",
        "f-scylla.svg",
        "f-doppio-uring.folded",
        "f-diff-doppio-uring-scylla.svg",
    ] {
        let path = dir.join(file);
        assert!(path.exists(), "{file}: {err}");
        assert!(err.contains(&format!("{}", path.display())) || file.ends_with(".folded"));
    }
    let svg = std::fs::read_to_string(dir.join("f-diff-doppio-uring-scylla.svg")).unwrap();
    assert!(svg.contains("CPU per request"), "title");
    // The flamegraph's stacks give the anatomy too, sampled as a flamegraph is.
    let j = json(&report);
    let a = &j["backends"]["scylla"]["anatomy"];
    assert!(a["sampling"].as_str().unwrap().contains("-F 999"), "{a}");
    // Two reports' differential flamegraph (here a report against itself: every frame
    // the same per request), and the refusal without a baseline.
    let r = report.to_str().unwrap();
    let svg = dir.join("self.svg");
    let out = Command::new(env!("CARGO_BIN_EXE_doppio"))
        .args(["show", r, r, "--flamediff", svg.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let drawn = std::fs::read_to_string(&svg).unwrap();
    assert!(drawn.contains("CPU per request"), "title");
    assert!(j["backends"]["doppio-uring"]["anatomy"]["folded"]
        .as_str()
        .unwrap()
        .ends_with("f-doppio-uring.folded"));
    let out = Command::new(env!("CARGO_BIN_EXE_doppio"))
        .args(["show", r, "--flamediff", svg.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("against a baseline"));
    // No data file is left behind.
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".perf.data"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
