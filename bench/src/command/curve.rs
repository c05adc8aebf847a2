//! `doppio curve`: the load curve. Each backend's capacity is probed once (as `run
//! --equal-load` does it), then at each load of `--loads` every backend runs in rotated
//! rounds at that share of the slowest one's capacity, each load an ordinary run report in
//! `--out` (`load-30.json`, and `load-30.txt`, the text `doppio run` prints); then the curve
//! of those reports: client CPU, syscalls, waits and latency per request against load
//! (`curve.json`, `curve.md`, `curve.svg`). `--from` draws the curve from reports written
//! before, without running anything.
//!
//! The loads are run by `crate::experiment::curve`; this command checks the options,
//! writes each load's report as it ends and the curve (its SVG drawn by
//! `crate::render::svg::curve`). The curve itself is the report layer's
//! ([`crate::report::curve`]).

use std::path::{Path, PathBuf};

use super::setup::contest_of;
use crate::cli::{limits::Loads, CurveArgs};
use crate::experiment::curve::{CurvePlan, DEFAULT_ROUNDS};
use crate::experiment::round_report::{new_report, server_of, Heading};
use crate::experiment::rounds::RoundsPlan;
use crate::failure::{CurveError, Failure, RunFailure};
use crate::render::curve_table::markdown;
use crate::render::text;
use crate::report::curve::Curve;
use crate::report::file::write_text;
use crate::report::Report;

/// The files of the curve in `--out`.
const CURVE_FILES: [&str; 3] = ["curve.json", "curve.md", "curve.svg"];

/// `doppio curve`: the loads run (or `--from`'s reports read), then the curve written.
pub fn curve(a: &CurveArgs, argv: Vec<String>) -> Result<(), Failure> {
    if a.from.is_empty() {
        return measure(a, argv);
    }
    let reports = read_points(&a.from)?;
    prepare_out(&a.out, a.force)?;
    write_curve(&a.out, &reports)?;
    Ok(())
}

/// `doppio curve` without `--from`: every check made before anything connects (the
/// folder last, created then), the loads run, then the curve of those that finished. The
/// command's failure is the loads' own, then the curve's.
fn measure(a: &CurveArgs, argv: Vec<String>) -> Result<(), Failure> {
    let plan = prepare(a, argv)?;
    prepare_out(&a.out, a.force)?;
    let (points, result) =
        crate::experiment::curve::run(plan, &mut |report| write_load(&a.out, report));
    let finished = points.iter().any(|(_, r)| r.fatal_error.is_none());
    let curve = finished.then(|| write_curve(&a.out, &points));
    result?;
    match curve {
        Some(Err(e)) => Err(RunFailure::Curve(e).into()),
        _ => Ok(()),
    }
}

/// Every check of `a` that needs no folder and no connection: workload, drivers, the
/// connection options, `--server-pid`.
fn prepare(a: &CurveArgs, argv: Vec<String>) -> Result<CurvePlan<'_>, Failure> {
    let c = &a.connect;
    let (workload, drivers, options) = contest_of(c, &a.results)?;
    let started_at = crate::report::now_rfc3339();
    let server = server_of(a.rounds.server_pid, &options)?;
    let plan = RoundsPlan {
        args: &a.rounds,
        connect: c,
        workload,
        segments: a.rounds.segments.unwrap_or(DEFAULT_ROUNDS),
        cycles: None,
    };
    let heading = Heading {
        argv,
        tag: a.tag.clone(),
        started_at,
    };
    let mut template = new_report(&plan, &drivers, &options, server.as_ref(), heading);
    // Every load is paced: the grid is in force at each.
    template.config.release_grid_s = Some(a.rounds.release_grid.as_secs_f64());
    Ok(CurvePlan {
        a,
        drivers,
        options,
        server,
        plan,
        template,
    })
}

/// Writes a load's report to `dir` as `load-PERCENT.json` and its text as `.txt`; the
/// JSON file's name.
fn write_load(dir: &Path, report: &Report) -> Result<String, Failure> {
    let share = report.config.equal_load.as_ref().map_or(0.0, |e| e.share);
    let stem = format!("load-{}", Loads::percent(share));
    let json = dir.join(format!("{stem}.json"));
    let txt = dir.join(format!("{stem}.txt"));
    let failed = |e| Failure::Run(RunFailure::Report(e));
    report.write(&json).map_err(failed)?;
    write_text(&txt, text::render(report, false)).map_err(failed)?;
    eprintln!(
        "load report written to {} and {}",
        json.display(),
        txt.display()
    );
    Ok(format!("{stem}.json"))
}

/// `--from`'s reports, each a point of a curve, one per load; each kept with its file's
/// name (as `curve.json` names the points' reports).
fn read_points(paths: &[PathBuf]) -> Result<Vec<(String, Report)>, CurveError> {
    let mut points: Vec<(String, Report)> = Vec::new();
    let mut seen: Vec<(String, &PathBuf)> = Vec::new();
    for path in paths {
        let report = Report::read(path).map_err(|source| CurveError::Read { source })?;
        let Some(e) = &report.config.equal_load else {
            return Err(CurveError::NotAPoint { path: path.clone() });
        };
        let percent = Loads::percent(e.share);
        if let Some((_, first)) = seen.iter().find(|(p, _)| *p == percent) {
            return Err(CurveError::SameLoad {
                first: (*first).clone(),
                second: path.clone(),
                percent,
            });
        }
        seen.push((percent, path));
        points.push((file_name(path), report));
    }
    Ok(points)
}

/// The name of `path`'s file.
fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// `--out`, made ready before anything runs: created if missing; refused when it is not a
/// folder, or (unless `force`) when it holds anything; checked writable.
fn prepare_out(dir: &Path, force: bool) -> Result<(), CurveError> {
    let out = |source| CurveError::Out {
        path: dir.to_owned(),
        source,
    };
    if dir.exists() && !dir.is_dir() {
        return Err(CurveError::OutNotFolder {
            path: dir.to_owned(),
        });
    }
    if dir.is_dir() {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .map_err(out)?
            .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect();
        names.sort();
        if let (false, Some(first)) = (force, names.first()) {
            return Err(CurveError::OutNotEmpty {
                path: dir.to_owned(),
                count: names.len(),
                first: first.clone(),
            });
        }
    } else {
        std::fs::create_dir_all(dir).map_err(out)?;
    }
    // A file made and removed at once: the folder takes the files the command writes.
    let probe = dir.join(format!(".doppio-probe-{}", std::process::id()));
    std::fs::write(&probe, b"")
        .and_then(|()| std::fs::remove_file(&probe))
        .map_err(out)
}

/// The curve of `points` (each a report and its file's name) written to `dir`: JSON,
/// markdown (printed on stdout too) and SVG. Refused when no point is left to draw.
fn write_curve(dir: &Path, points: &[(String, Report)]) -> Result<Curve, CurveError> {
    let curve = Curve::of(
        points,
        format!("doppio-bench {}", env!("CARGO_PKG_VERSION")),
    );
    if curve.loads.is_empty() {
        return Err(CurveError::NoPoint(curve.left_out));
    }
    let [json, md, svg] = CURVE_FILES.map(|f| dir.join(f));
    let write = |path: &Path, text: String| {
        std::fs::write(path, text).map_err(|source| CurveError::Write {
            path: path.to_owned(),
            source,
        })
    };
    // Serialising plain numbers, strings and maps does not fail.
    let text = serde_json::to_string_pretty(&curve).map_err(|e| CurveError::Write {
        path: json.clone(),
        source: e.into(),
    })?;
    write(&json, text + "\n")?;
    let table = markdown(&curve);
    print!("{table}");
    write(&md, table)?;
    let title = format!(
        "load curve: {}, -p {}",
        curve.workload,
        curve.loads.first().map_or(0, |l| l.concurrency)
    );
    crate::render::svg::curve::draw(&curve, &svg, &title).map_err(|source| CurveError::Draw {
        path: svg.clone(),
        source,
    })?;
    eprintln!(
        "curve of {} load(s) written to {}",
        curve.loads.len(),
        CURVE_FILES
            .map(|f| dir.join(f).display().to_string())
            .join(", ")
    );
    Ok(curve)
}
