//! `--hdr-log FILE`: the HdrHistogram interval log written while the run goes, one interval
//! per measured sample as soon as every worker is past it, tagged with the backend
//! (`Tag=doppio`, `Tag=scylla`, ...), so that `HistogramLogProcessor`, HdrHistogram's
//! plotters or `tail -f` see a long run as it happens. Values are nanoseconds; the interval
//! max column is in milliseconds (divisor 1e6), as `doppio hdr` writes it.
//!
//! Per-statement histograms are kept per run, not per sample, so the log's intervals are
//! the backend's (every statement together); `doppio hdr --statement` gives one statement's
//! whole-run histogram afterwards.
//!
//! Each line is flushed at once: a run stopped by Ctrl-C or killed keeps every interval
//! written so far.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;

use crate::stats::LatencyHistogram;

/// An interval log being written.
#[derive(Debug)]
pub(crate) struct LiveHdrLog {
    out: BufWriter<File>,
    /// The log's StartTime and BaseTime: interval starts are offsets from it.
    start: SystemTime,
}

impl LiveHdrLog {
    /// Creates `path` and writes the log's header, with `start` as its start time.
    pub(crate) fn create(path: &Path, start: SystemTime) -> io::Result<Self> {
        let mut out = BufWriter::new(File::create(path)?);
        let secs = start
            .duration_since(UNIX_EPOCH)
            .unwrap_or(Duration::ZERO)
            .as_secs_f64();
        let date = chrono::DateTime::<chrono::Utc>::from(start)
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        writeln!(
            out,
            "#written by doppio run --hdr-log; values in nanoseconds"
        )?;
        writeln!(out, "#[StartTime: {secs:.3} (seconds since epoch), {date}]")?;
        writeln!(out, "#[BaseTime: {secs:.3} (seconds since epoch)]")?;
        writeln!(
            out,
            "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\""
        )?;
        out.flush()?;
        Ok(Self { out, start })
    }

    /// Appends the interval that began at `began` and lasted `duration`, tagged `tag`.
    pub(crate) fn interval(
        &mut self,
        tag: &str,
        began: SystemTime,
        duration: Duration,
        h: &LatencyHistogram,
    ) -> io::Result<()> {
        let offset = began
            .duration_since(self.start)
            .unwrap_or(Duration::ZERO)
            .as_secs_f64();
        let payload = base64::engine::general_purpose::STANDARD.encode(h.to_v2_bytes()?);
        writeln!(
            self.out,
            "Tag={tag},{offset:.3},{:.3},{:.3},{payload}",
            duration.as_secs_f64(),
            h.max() as f64 / 1e6
        )?;
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};

    #[test]
    fn the_log_reads_back_with_hdrhistograms_own_parser() {
        let dir = std::env::temp_dir().join(format!("doppio-live-log-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("run.hlog");
        let start = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let mut log = LiveHdrLog::create(&path, start).unwrap();
        let mut h = LatencyHistogram::new();
        for v in [1_000_000, 2_000_000, 3_000_000] {
            h.record(v);
        }
        log.interval(
            "doppio",
            start + Duration::from_millis(1500),
            Duration::from_secs(1),
            &h,
        )
        .unwrap();
        log.interval(
            "scylla",
            start + Duration::from_millis(2500),
            Duration::from_secs(1),
            &h,
        )
        .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let mut start_time = None;
        let mut intervals = Vec::new();
        for entry in IntervalLogIterator::new(text.as_bytes()) {
            match entry.unwrap() {
                LogEntry::StartTime(t) => start_time = Some(t),
                LogEntry::BaseTime(_) => {}
                LogEntry::Interval(i) => intervals.push((
                    i.tag().map(|t| t.as_str().to_owned()),
                    i.start_timestamp(),
                    i.duration(),
                    i.max(),
                    i.encoded_histogram().to_owned(),
                )),
            }
        }
        assert_eq!(start_time, Some(Duration::from_secs(1_700_000_000)));
        assert_eq!(intervals.len(), 2);
        assert_eq!(intervals[0].0.as_deref(), Some("doppio"));
        assert_eq!(intervals[1].0.as_deref(), Some("scylla"));
        assert_eq!(intervals[0].1, Duration::from_millis(1500));
        assert_eq!(intervals[1].2, Duration::from_secs(1));
        assert!(
            (intervals[0].3 - 3.0).abs() < 0.01,
            "max in ms: {}",
            intervals[0].3
        );
        let back = LatencyHistogram::from_base64(&intervals[0].4).unwrap();
        assert_eq!(back.count(), 3);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
