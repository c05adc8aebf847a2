//! `doppio curve` against the stub (in this process): each backend's capacity probed once
//! (twice in rotated order, the better probe kept), then every backend at each load of
//! `--loads` in rotated rounds at that share of the slowest capacity, a run report per
//! load, and the curve of them (JSON, markdown, SVG); `--from` redraws that curve from the
//! reports; bad options and a used folder are refused before anything connects; Ctrl-C
//! keeps the loads that finished and their curve.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support;
use support::{assert_input_error, doppio, json, scratch_dir, svg_lines_and_texts};

/// The tests that measure rates run one at a time: beside each other on two cores, none
/// would keep its rate.
static MEASURING: Mutex<()> = Mutex::new(());

/// `doppio curve -w empty ADDR` with `args`.
fn curve(addr: &str, args: &[&str]) -> std::process::Output {
    let mut all = vec!["curve", "-w", "empty", addr];
    all.extend_from_slice(args);
    doppio(&all)
}

/// The panels' y labels the curve's SVG draws for `c`: the node's CPU only when measured,
/// syscalls only when counted.
fn panels_of(c: &Value) -> Vec<&'static str> {
    let any = |field: &str| {
        c["backends"]
            .as_object()
            .unwrap()
            .values()
            .flat_map(|s| s.as_array().unwrap())
            .any(|p| !p[field].is_null())
    };
    let mut panels = vec!["client CPU per request [µs]"];
    if any("client_plus_server_cpu_us_per_req") {
        panels.push("client + node CPU per request [µs]");
    }
    if any("syscalls_per_req") {
        panels.push("syscalls per request");
    }
    panels.extend([
        "wake-ups (sleeps) per request",
        "p50 latency",
        "p99 latency",
    ]);
    panels
}

/// The data lines of the curve's SVG (2 px wide, two points or more: at two loads a line
/// has two points, so `svg_lines_and_texts`, which counts three or more, does not see
/// them) less the legend's samples (one per backend, two points each).
fn polylines_2px(svg: &str) -> usize {
    svg.split("<polyline")
        .skip(1)
        .filter(|p| {
            p.split_once('>')
                .is_some_and(|(a, _)| a.contains("stroke-width=\"2\""))
        })
        .count()
}

/// Checks the SVG of a curve of `backends` with these `panels`: every panel's label, a
/// line per backend per panel, a legend naming each backend once, and that it renders
/// (with the backends' colours: red, then blue).
fn check_svg(path: &Path, backends: &[&str], panels: &[&str]) {
    let svg = std::fs::read_to_string(path).unwrap();
    let (_, texts) = svg_lines_and_texts(&svg);
    for p in panels {
        assert_eq!(
            texts.iter().filter(|t| t.starts_with(p)).count(),
            1,
            "panel {p}: {texts:?}"
        );
    }
    assert_eq!(
        texts
            .iter()
            .filter(|t| t.starts_with("load [% of the slowest"))
            .count(),
        panels.len(),
        "{texts:?}"
    );
    for b in backends {
        assert_eq!(
            texts.iter().filter(|t| t == b).count(),
            1,
            "legend {b}: {texts:?}"
        );
    }
    let lines = polylines_2px(&svg);
    assert_eq!(
        lines,
        panels.len() * backends.len() + backends.len(),
        "a line per backend per panel, and the legend's samples"
    );
    let mut options = resvg::usvg::Options::default();
    options.fontdb_mut().load_system_fonts();
    let tree = resvg::usvg::Tree::from_str(&svg, &options).unwrap();
    let size = tree.size().to_int_size();
    let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height()).unwrap();
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::default(),
        &mut pixmap.as_mut(),
    );
    let (mut red, mut blue) = (0, 0);
    for p in pixmap.pixels() {
        let (r, g, b) = (p.red() as i32, p.green() as i32, p.blue() as i32);
        red += usize::from(r - g > 80 && r - b > 80);
        blue += usize::from(b - r > 80 && b - g > 40);
    }
    assert!(red > 100 && blue > 100, "red {red}, blue {blue} pixels");
}

#[test]
fn every_backend_runs_at_each_load_and_the_curve_is_drawn_and_redrawn_from_its_reports() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let _turn = support::one_at_a_time(&MEASURING);
    let stub = support::stub_with_rules("");
    let addr = stub.addr().to_string();
    let dir = scratch_dir("curve").join("out");
    let out = curve(
        &addr,
        &[
            "--driver",
            "doppio,doppio-uring",
            "-p",
            "16",
            "--loads",
            "20%,60%",
            "-d",
            "2s",
            "--segments",
            "2",
            "--warmup",
            "200ms",
            "-o",
            dir.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Probed once, before the first load: two probes per backend, rotated.
    let probes: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("] done after"))
        .filter_map(|l| l.strip_prefix("[capacity probe ("))
        .filter_map(|l| l.split(')').next())
        .collect();
    assert_eq!(
        probes,
        ["doppio", "doppio-uring", "doppio-uring", "doppio"],
        "{stderr}"
    );
    for f in [
        "load-20.json",
        "load-20.txt",
        "load-60.json",
        "load-60.txt",
        "curve.json",
        "curve.md",
        "curve.svg",
    ] {
        assert!(dir.join(f).is_file(), "{f} written");
    }
    let c = json(&dir.join("curve.json"));
    assert_eq!(c["kind"], "curve");
    assert_eq!(c["drivers"], serde_json::json!(["doppio", "doppio-uring"]));
    let capacities = &c["loads"][0]["capacities"];
    let slowest = ["doppio", "doppio-uring"]
        .iter()
        .map(|d| capacities[d].as_f64().unwrap())
        .fold(f64::INFINITY, f64::min);
    assert!(slowest > 100.0, "{capacities}");
    for (k, (share, file)) in [(0.2, "load-20.json"), (0.6, "load-60.json")]
        .into_iter()
        .enumerate()
    {
        let load = &c["loads"][k];
        assert_eq!(load["share"], share);
        assert_eq!(load["report"], file);
        assert_eq!(&load["capacities"], capacities, "one probe for every load");
        let rate = load["rate"].as_f64().unwrap();
        assert!((rate / (share * slowest) - 1.0).abs() < 1e-9, "{rate}");
        // The load's report says what it is, and is an ordinary run report.
        let r = json(&dir.join(file));
        assert_eq!(r["config"]["equal_load"]["share"], share);
        assert_eq!(r["config"]["equal_load"]["rate"].as_f64().unwrap(), rate);
        assert_eq!(r["config"]["rate"].as_f64().unwrap(), rate);
        assert_eq!(r["config"]["segments"], 2);
        assert!(r["config"]["release_grid_s"].as_f64().is_some());
        assert!(r["fatal_error"].is_null());
        let text = std::fs::read_to_string(dir.join(file).with_extension("txt")).unwrap();
        assert!(
            text.contains("SUMMARY") && text.contains("VERDICT"),
            "{text}"
        );
        for d in ["doppio", "doppio-uring"] {
            let p = &c["backends"][d][k];
            assert_eq!(p["share"], share, "{d}: {p}");
            assert_eq!(p["rate"].as_f64().unwrap(), rate);
            let tp = p["throughput_rps"].as_f64().unwrap();
            assert!(
                (tp / rate - 1.0).abs() < 0.05,
                "{d} at {share}: {tp:.0} req/s against a rate of {rate:.0}"
            );
            assert_eq!(p["throughput_rps"], r["backends"][d]["throughput_rps"]);
            assert_eq!(p["cpu_us_per_req"], r["backends"][d]["cpu_us_per_req"]);
            assert!(p["cpu_us_per_req"].as_f64().unwrap() > 0.0, "{p}");
            assert!(p["latency_p99_ns"].as_u64().unwrap() >= p["latency_p50_ns"].as_u64().unwrap());
            assert!(p["send_lateness_p50_ns"].as_u64().is_some(), "paced: {p}");
            assert!(p["kept_schedule"].is_boolean(), "{p}");
        }
        // Waits by cause for doppio's own runtime, none for glommio.
        assert!(c["backends"]["doppio"][k]["waits_per_req"].is_null());
        let w = &c["backends"]["doppio-uring"][k]["waits_per_req"];
        assert!(w["waiting"].as_f64().unwrap() >= 0.0, "{w}");
    }
    assert_eq!(c["backends"]["doppio"].as_array().unwrap().len(), 2);
    // No scylla: no ratio.
    assert_eq!(c["cpu_ratios"], serde_json::json!([]));
    let md = std::fs::read_to_string(dir.join("curve.md")).unwrap();
    for row in [
        "| doppio | 20 % |",
        "| doppio | 60 % |",
        "| doppio-uring | 20 % |",
        "| doppio-uring | 60 % |",
    ] {
        assert!(md.contains(row), "{row} in {md}");
    }
    check_svg(
        &dir.join("curve.svg"),
        &["doppio", "doppio-uring"],
        &panels_of(&c),
    );

    // The same curve, drawn again from the two reports.
    let again = scratch_dir("curve").join("again");
    let out = doppio(&[
        "curve",
        "--from",
        dir.join("load-60.json").to_str().unwrap(),
        dir.join("load-20.json").to_str().unwrap(),
        "-o",
        again.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(json(&again.join("curve.json")), c);
    assert_eq!(std::fs::read_to_string(again.join("curve.md")).unwrap(), md);
    assert!(again.join("curve.svg").is_file());
    // The folder holds a curve now: --from into it again wants --force.
    let out = doppio(&[
        "curve",
        "--from",
        dir.join("load-20.json").to_str().unwrap(),
        "-o",
        again.to_str().unwrap(),
    ]);
    assert_input_error(&out, &["--out", "not empty", "--force"]);
    let out = doppio(&[
        "curve",
        "--from",
        dir.join("load-20.json").to_str().unwrap(),
        "-o",
        again.to_str().unwrap(),
        "--force",
    ]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        json(&again.join("curve.json"))["loads"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn bad_loads_and_a_used_folder_are_refused_before_anything_connects() {
    let _turn = doppio_test_support::file_turn(module_path!());
    // Nothing listens here: a command that got as far as connecting would say so.
    let addr = "127.0.0.1:1";
    let dir = scratch_dir("curve-refused");
    let fresh = dir.join("fresh");
    for (loads, named) in [
        ("0%", "`0%`"),
        ("30%,150%", "`150%`"),
        ("abc", "`abc`"),
        ("", "is not a list of loads"),
        ("30%,0.3", "`0.3` repeats the load 30 %"),
    ] {
        let out = curve(addr, &["--loads", loads, "-o", fresh.to_str().unwrap()]);
        assert_input_error(&out, &["--loads", named]);
        assert!(!fresh.exists(), "nothing created for --loads {loads}");
    }
    let many: Vec<String> = (1..=21).map(|k| format!("{}%", k * 4)).collect();
    let out = curve(
        addr,
        &["--loads", &many.join(","), "-o", fresh.to_str().unwrap()],
    );
    assert_input_error(
        &out,
        &["--loads", "gives 21 loads: a curve takes at most 20"],
    );

    let used = dir.join("used");
    std::fs::create_dir_all(&used).unwrap();
    std::fs::write(used.join("notes.txt"), "mine").unwrap();
    let out = curve(addr, &["-o", used.to_str().unwrap()]);
    assert_input_error(&out, &["--out", "not empty", "notes.txt", "--force"]);
    let kept: Vec<_> = std::fs::read_dir(&used).unwrap().collect();
    assert_eq!(kept.len(), 1, "the folder is left as it was");
    let file = dir.join("a-file");
    std::fs::write(&file, "").unwrap();
    let out = curve(addr, &["-o", file.to_str().unwrap()]);
    assert_input_error(&out, &["--out", "not a folder"]);
    // An empty folder is taken: then the node that does not answer is the error.
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let out = curve(addr, &["-o", empty.to_str().unwrap(), "--driver", "doppio"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("--out"), "{err}");
    // --from takes reports of loads, one per load, and runs nothing.
    let plain = dir.join("plain.json");
    let mut r = serde_json::json!({});
    r["kind"] = "findmax".into();
    std::fs::write(&plain, r.to_string()).unwrap();
    let out = doppio(&[
        "curve",
        "--from",
        plain.to_str().unwrap(),
        "-o",
        fresh.to_str().unwrap(),
    ]);
    assert_input_error(&out, &["--from", "plain.json"]);
    let out = doppio(&[
        "curve",
        "--from",
        plain.to_str().unwrap(),
        "--loads",
        "50%",
        "-o",
        fresh.to_str().unwrap(),
    ]);
    assert_input_error(&out, &["--loads", "--from"]);
}

#[test]
fn doppio_uring_against_scylla_has_a_cpu_ratio_at_each_load() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let _turn = support::one_at_a_time(&MEASURING);
    let stub = support::stub_with_rules("");
    let addr = stub.addr().to_string();
    let dir = scratch_dir("curve-scylla").join("out");
    let out = curve(
        &addr,
        &[
            "--driver",
            "doppio-uring,scylla",
            "-p",
            "16",
            "--loads",
            "50%",
            "-d",
            "1s",
            "--segments",
            "2",
            "--warmup",
            "100ms",
            "-o",
            dir.to_str().unwrap(),
            "-q",
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let c = json(&dir.join("curve.json"));
    let ratios = c["cpu_ratios"].as_array().unwrap();
    assert_eq!(ratios.len(), 1, "{ratios:?}");
    let r = &ratios[0];
    assert_eq!(
        (
            r["share"].as_f64(),
            r["backend"].as_str(),
            r["over"].as_str()
        ),
        (Some(0.5), Some("doppio-uring"), Some("scylla"))
    );
    let (uring, scylla) = (
        &c["backends"]["doppio-uring"][0],
        &c["backends"]["scylla"][0],
    );
    let ratio = r["ratio"].as_f64().unwrap();
    assert!(ratio.is_finite() && ratio > 0.0, "{r}");
    assert!(scylla["waits_per_req"].is_null());
    // The VERDICT pairs them by round where both kept the grid; else the means.
    let kept = uring["kept_schedule"] == true && scylla["kept_schedule"] == true;
    assert_eq!(r["paired"], kept, "{r}");
    if !kept {
        let means =
            uring["cpu_us_per_req"].as_f64().unwrap() / scylla["cpu_us_per_req"].as_f64().unwrap();
        assert!((ratio / means - 1.0).abs() < 1e-9, "{r}");
    }
    let md = std::fs::read_to_string(dir.join("curve.md")).unwrap();
    assert!(md.contains("| load | doppio-uring/scylla |"), "{md}");
    check_svg(
        &dir.join("curve.svg"),
        &["doppio-uring", "scylla"],
        &panels_of(&c),
    );
}

#[test]
fn ctrl_c_keeps_the_loads_that_finished_and_draws_their_curve() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let _turn = support::one_at_a_time(&MEASURING);
    let stub = support::stub_with_rules("");
    let addr = stub.addr().to_string();
    let dir = scratch_dir("curve-interrupt").join("out");
    let child = Command::new(env!("CARGO_BIN_EXE_doppio"))
        .args([
            "curve",
            "-w",
            "empty",
            &addr,
            "--driver",
            "doppio",
            "-p",
            "8",
            "--loads",
            "30%,60%",
            "-d",
            "1s",
            "--segments",
            "2",
            "--warmup",
            "0s",
            "-o",
            dir.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupted during the second load's first segment (0.5 s), which starts once the
    // first load's text is written.
    let first = dir.join("load-30.txt");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !first.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: signalling a child process of this test by its pid.
    assert_eq!(
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) },
        0
    );
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("{}{stderr}", String::from_utf8_lossy(&out.stdout));
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    let c = json(&dir.join("curve.json"));
    let loads: Vec<f64> = c["loads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["share"].as_f64().unwrap())
        .collect();
    assert_eq!(loads, [0.3], "the curve of the load that finished");
    // The interrupted load keeps what it measured, and says so; the curve names it.
    let second = json(&dir.join("load-60.json"));
    assert_eq!(second["fatal_error"], "interrupted");
    assert_eq!(
        c["left_out"],
        serde_json::json!(["load-60.json: did not finish (interrupted)"])
    );
}
