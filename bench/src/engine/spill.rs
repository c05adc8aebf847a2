//! Bounded memory for runs of any length: each released sample is written, whole, to an
//! unnamed temporary file (one JSON line: its counts, the figures reports and LOG lines show,
//! and its two histograms compressed), and read back once, when the report is written. A
//! phase keeps in memory only the file and the number of samples in it, and its totals,
//! which the caller merges as samples arrive.
//!
//! Before this, every sample held two full latency histograms (about 0.5 MiB together): a
//! 30-minute run at one-second samples grew by about 1 GiB.
//!
//! Not on the request path: one write per sample interval per backend.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Seek, SeekFrom};
use std::os::unix::fs::FileExt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::stats::LatencyHistogram;

use super::collect::Sample;
use super::statements::StatementCounts;

/// A spill file: one JSON line per sample, appended. The file has no name (removed as soon
/// as it is made), so it disappears with the process however that ends.
#[derive(Debug)]
struct Spill {
    /// The file and its length (the offset of the next line). A mutex because the report
    /// may be built on another thread than the one that stored the samples; taken once per
    /// sample interval, never per request.
    file: Mutex<(File, u64)>,
}

impl Spill {
    fn new_in(dir: &std::path::Path) -> io::Result<Self> {
        let path = dir.join(format!(
            "doppio-samples-{}-{}",
            std::process::id(),
            unique()
        ));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)?;
        // Unlinked at once: the open handle keeps the data, the folder keeps nothing.
        std::fs::remove_file(&path)?;
        Ok(Self {
            file: Mutex::new((file, 0)),
        })
    }

    fn append(&self, line: &[u8]) -> io::Result<()> {
        let mut guard = self.file.lock().unwrap_or_else(|p| p.into_inner());
        let (file, end) = &mut *guard;
        file.write_all_at(line, *end)?;
        *end += line.len() as u64;
        Ok(())
    }

    /// A reader of the whole file from its start (its own handle: writing uses explicit
    /// offsets, so the two never disturb each other).
    fn reader(&self) -> io::Result<BufReader<File>> {
        let guard = self.file.lock().unwrap_or_else(|p| p.into_inner());
        let mut file = guard.0.try_clone()?;
        file.seek(SeekFrom::Start(0))?;
        Ok(BufReader::new(file))
    }
}

/// A number no other spill of this process had (each phase of each backend makes one).
fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The samples of one phase, in their spill file.
#[derive(Debug, Clone, Default)]
pub struct SpilledSamples {
    spill: Option<Arc<Spill>>,
    len: usize,
}

impl SpilledSamples {
    /// A new, empty spill in the system's temporary folder.
    pub(crate) fn new() -> io::Result<Self> {
        Self::new_in(&std::env::temp_dir())
    }

    /// A new, empty spill in `dir`.
    pub(crate) fn new_in(dir: &std::path::Path) -> io::Result<Self> {
        Ok(Self {
            spill: Some(Arc::new(Spill::new_in(dir)?)),
            len: 0,
        })
    }

    /// Writes `s` out.
    pub(crate) fn push(&mut self, s: &Sample) -> io::Result<()> {
        let spill = match &self.spill {
            Some(spill) => spill,
            None => self
                .spill
                .insert(Arc::new(Spill::new_in(&std::env::temp_dir())?)),
        };
        let mut line = serde_json::to_vec(&StoredSample::of(s)?).map_err(io::Error::other)?;
        line.push(b'\n');
        spill.append(&line)?;
        self.len += 1;
        Ok(())
    }

    /// Samples stored.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Whether none was stored.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The samples, read back in order, one at a time.
    pub(crate) fn iter(&self) -> io::Result<impl Iterator<Item = io::Result<StoredSample>>> {
        let lines = match &self.spill {
            Some(spill) => Some(spill.reader()?.lines()),
            None => None,
        };
        Ok(lines.into_iter().flatten().take(self.len).map(|line| {
            serde_json::from_str(&line?).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
        }))
    }
}

/// A histogram's figures and its compressed form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct HistogramDigest {
    /// Values recorded.
    pub(crate) count: u64,
    /// Their mean, ns (0 when empty).
    pub(crate) mean: f64,
    /// Median, ns.
    pub(crate) p50: u64,
    /// 99th percentile, ns.
    pub(crate) p99: u64,
    /// The histogram, HdrHistogram V2 compressed, base64 (as the report writes it).
    pub(crate) base64: String,
}

impl HistogramDigest {
    fn of(h: &LatencyHistogram) -> io::Result<Self> {
        use base64::Engine;
        Ok(Self {
            count: h.count(),
            mean: h.mean(),
            p50: h.value_at_percentile(50.0),
            p99: h.value_at_percentile(99.0),
            base64: base64::engine::general_purpose::STANDARD.encode(h.to_v2_bytes()?),
        })
    }
}

/// A sample as it is read back from the spill.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct StoredSample {
    /// Interval number since the phase start.
    pub(crate) index: u64,
    /// Offset of the interval's start from the phase start.
    pub(crate) start: Duration,
    /// The interval's length (the last one may be shorter).
    pub(crate) duration: Duration,
    /// Requests completed in the interval.
    pub(crate) requests: u64,
    /// Result rows of the interval's successful requests.
    pub(crate) rows: u64,
    /// Errors by kind.
    pub(crate) errors: Vec<(String, u64)>,
    /// Latency from the due time, successes.
    pub(crate) latency: HistogramDigest,
    /// Service time, successes.
    pub(crate) service: HistogramDigest,
    /// Mean lateness of sends after their due time, ns.
    pub(crate) mean_lateness_ns: f64,
    /// Per statement of the plan (by index): its counts in the interval.
    pub(crate) statements: Vec<StatementCounts>,
    /// Requests sent to each node (address) in the interval.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) requests_by_node: BTreeMap<String, u64>,
    /// Tablet misroutes in the interval (`None`: not counted).
    #[serde(default)]
    pub(crate) tablet_misroutes: Option<u64>,
    /// The schedule's mean rate over the interval, all workers (`None`: no rate limit).
    #[serde(default)]
    pub(crate) target_rps: Option<f64>,
}

impl StoredSample {
    fn of(s: &Sample) -> io::Result<Self> {
        Ok(Self {
            index: s.index,
            start: s.start,
            duration: s.duration,
            requests: s.requests,
            rows: s.rows,
            errors: s
                .errors
                .iter()
                .map(|(k, n)| ((*k).to_owned(), *n))
                .collect(),
            latency: HistogramDigest::of(&s.latency)?,
            service: HistogramDigest::of(&s.service)?,
            mean_lateness_ns: s.mean_lateness_ns,
            statements: s.statements.clone(),
            requests_by_node: s.nodes.iter().cloned().collect(),
            tablet_misroutes: s.tablet_misroutes,
            target_rps: s.target_rps,
        })
    }

    /// Requests per second in the interval.
    pub(crate) fn throughput(&self) -> f64 {
        let secs = self.duration.as_secs_f64();
        if secs > 0.0 {
            self.requests as f64 / secs
        } else {
            0.0
        }
    }

    /// Errors in the interval.
    pub(crate) fn error_count(&self) -> u64 {
        self.errors.iter().map(|(_, n)| n).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(index: u64, values: &[u64]) -> Sample {
        let mut latency = LatencyHistogram::new();
        let mut service = LatencyHistogram::new();
        for &v in values {
            latency.record(v);
            service.record(v / 2);
        }
        Sample {
            index,
            start: Duration::from_secs(index),
            duration: Duration::from_millis(999),
            requests: values.len() as u64 + 1,
            rows: 7,
            errors: vec![("timeout", 1)],
            latency,
            service,
            mean_lateness_ns: 3.5,
            target_rps: Some(1234.5),
            statements: vec![StatementCounts {
                requests: 3,
                errors: 1,
                rows: 2,
                latency_sum_ns: 99,
            }],
            nodes: Vec::new(),
            tablet_misroutes: None,
        }
    }

    #[test]
    fn samples_read_back_in_order_with_their_histograms_exact() {
        let mut spilled = SpilledSamples::new().unwrap();
        let a = sample(0, &[1_000, 2_000, 3_000, 1_000_000]);
        let b = sample(1, &(1..=1000).map(|v| v * 1_000).collect::<Vec<_>>());
        spilled.push(&a).unwrap();
        spilled.push(&b).unwrap();
        assert_eq!(spilled.len(), 2);
        let back: Vec<StoredSample> = spilled.iter().unwrap().map(Result::unwrap).collect();
        assert_eq!(back.len(), 2);
        assert_eq!(back[0].latency.p99, a.latency.value_at_percentile(99.0));
        assert_eq!(back[1].latency.mean, b.latency.mean());
        assert_eq!(back[1].service.base64, b.service.to_base64());
        assert_eq!(back[0].errors, vec![("timeout".to_owned(), 1)]);
        assert_eq!(back[0].error_count(), 1);
        assert_eq!(back[1].duration, Duration::from_millis(999));
        assert_eq!(back[1].statements, b.statements);
        assert_eq!(back[1].target_rps, Some(1234.5));
        let h = LatencyHistogram::from_base64(&back[1].latency.base64).unwrap();
        assert_eq!((h.count(), h.mean()), (1000, b.latency.mean()));
        // Read twice: the same.
        assert_eq!(spilled.iter().unwrap().count(), 2);
        // More samples after a read go after the others.
        spilled.push(&sample(2, &[7])).unwrap();
        let indices: Vec<u64> = spilled.iter().unwrap().map(|s| s.unwrap().index).collect();
        assert_eq!(indices, vec![0, 1, 2]);
    }

    #[test]
    fn the_spill_file_has_no_name_and_still_holds_its_data() {
        let dir = std::env::temp_dir().join(format!("doppio-spill-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut spilled = SpilledSamples::new_in(&dir).unwrap();
        spilled.push(&sample(0, &[5_000, 6_000])).unwrap();
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            0,
            "nothing in the folder"
        );
        let back: Vec<StoredSample> = spilled.iter().unwrap().map(Result::unwrap).collect();
        assert_eq!(back[0].latency.count, 2);
        std::fs::remove_dir(&dir).unwrap();
    }

    #[test]
    fn an_empty_default_reads_back_nothing() {
        let spilled = SpilledSamples::default();
        assert!(spilled.is_empty());
        assert_eq!(spilled.iter().unwrap().count(), 0);
    }
}
