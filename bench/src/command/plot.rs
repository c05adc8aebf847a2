//! `doppio plot REPORT... -o FILE.svg`: the reports read (run reports, or findmax reports,
//! not both) and drawn by `crate::render::svg::reports`.

use std::path::{Path, PathBuf};

use crate::failure::{Failure, PlotError, UsageError};
use crate::render::svg::reports::{plot, plot_findmax};
use crate::report::findmax::FindmaxReport;
use crate::report::Report;

/// Parses `--percentiles` ("50,99,99.9").
fn parse_percentiles(text: &str) -> Result<Vec<f64>, PlotError> {
    let ps: Vec<f64> = text
        .split(',')
        .map(|p| {
            p.trim()
                .parse::<f64>()
                .ok()
                .filter(|p| (0.0..=100.0).contains(p))
                .ok_or_else(|| PlotError::Percentile(p.to_owned()))
        })
        .collect::<Result<_, _>>()?;
    if ps.is_empty() {
        return Err(PlotError::NoPercentile);
    }
    Ok(ps)
}

/// `doppio plot`: `reports` drawn over time to `output`.
pub fn command(
    reports: &[PathBuf],
    output: &Path,
    percentiles: &str,
    title: Option<&str>,
) -> Result<(), Failure> {
    let percentiles = parse_percentiles(percentiles)?;
    let mut findmax = Vec::new();
    for path in reports {
        if let Some(r) = FindmaxReport::read_if_findmax(path)? {
            findmax.push((path.display().to_string(), r));
        }
    }
    if !findmax.is_empty() {
        if findmax.len() != reports.len() {
            return Err(UsageError::MixedPlot.into());
        }
        let title = title.unwrap_or("achieved rate and p99 against target rate");
        plot_findmax(&findmax, output, title)?;
        eprintln!("plot written to {}", output.display());
        return Ok(());
    }
    let mut loaded = Vec::with_capacity(reports.len());
    for path in reports {
        loaded.push((path.display().to_string(), Report::read(path)?));
    }
    let title = title.unwrap_or("throughput and latency over time");
    plot(&loaded, &percentiles, output, title)?;
    eprintln!("plot written to {}", output.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_parse_or_say_which_is_wrong() {
        assert_eq!(
            parse_percentiles("50, 99,99.9").unwrap(),
            vec![50.0, 99.0, 99.9]
        );
        assert!(parse_percentiles("50,101")
            .unwrap_err()
            .to_string()
            .contains("`101`"));
        assert!(parse_percentiles("p99")
            .unwrap_err()
            .to_string()
            .contains("`p99`"));
    }
}
