//! `doppio hdr`: a run report's latency histograms as an HdrHistogram interval log.

use std::path::Path;

use crate::failure::{Failure, UsageError};
use crate::report::Report;

/// `doppio hdr`: the chosen backend's samples as an HdrHistogram interval log, or with
/// `statement` that run statement's whole-run histogram as one interval.
pub fn hdr(
    report: &Path,
    output: &Path,
    driver: Option<&str>,
    statement: Option<&str>,
) -> Result<(), Failure> {
    let r = Report::read(report)?;
    let name = match driver {
        Some(d) => d.to_owned(),
        None => r.config.drivers.first().cloned().unwrap_or_default(),
    };
    let Some(b) = r.backends.get(&name) else {
        return Err(UsageError::NoDriverResults {
            report: report.to_owned(),
            driver: name,
        }
        .into());
    };
    if let Some(wanted) = statement {
        let Some(st) = b.statements.statements.iter().find(|s| s.name == wanted) else {
            return Err(UsageError::NoStatement {
                report: report.to_owned(),
                statement: wanted.to_owned(),
                driver: name,
                names: b
                    .statements
                    .statements
                    .iter()
                    .map(|s| s.name.clone())
                    .collect(),
            }
            .into());
        };
        let h = crate::stats::LatencyHistogram::from_base64(&st.histogram)?;
        return write_hlog(
            &r,
            output,
            &[(0.0, b.throughput.elapsed_s, &h)],
            &format!("{name} {wanted}"),
        );
    }
    let mut hists = Vec::with_capacity(b.samples.samples.len());
    let mut offset = 0.0;
    let mut last_segment = 0;
    let mut segment_base = 0.0;
    for s in &b.samples.samples {
        if s.segment != last_segment {
            segment_base = offset;
            last_segment = s.segment;
        }
        let h = crate::stats::LatencyHistogram::from_base64(&s.histogram)?;
        let start = segment_base + s.start_s;
        offset = start + s.duration_s;
        hists.push((start, s.duration_s, h));
    }
    let intervals: Vec<(f64, f64, &crate::stats::LatencyHistogram)> =
        hists.iter().map(|(a, b, h)| (*a, *b, h)).collect();
    write_hlog(&r, output, &intervals, &name)
}

/// Writes `intervals` (offset and length in seconds, histogram) of `what` as an interval log
/// starting at the report's start.
fn write_hlog(
    r: &Report,
    output: &Path,
    intervals: &[(f64, f64, &crate::stats::LatencyHistogram)],
    what: &str,
) -> Result<(), Failure> {
    let mut file = std::io::BufWriter::new(std::fs::File::create(output)?);
    let start_unix = crate::report::rfc3339_to_unix(&r.started_at).unwrap_or(0) as f64;
    crate::stats::write_interval_log(&mut file, start_unix, intervals)?;
    std::io::Write::flush(&mut file)?;
    eprintln!(
        "{} intervals of {what} written to {}",
        intervals.len(),
        output.display()
    );
    Ok(())
}
