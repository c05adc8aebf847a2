//! HDR latency histograms: recording, percentiles, merging, base64 (de)serialisation, and
//! the interval log of a run's histograms.

use std::io::Write;

use base64::Engine as _;
use hdrhistogram::serialization::interval_log::IntervalLogWriterBuilder;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;

/// Why a histogram could not be read.
#[derive(Debug, thiserror::Error)]
pub enum StatsError {
    /// Not valid base64.
    #[error("histogram is not valid base64: {0}")]
    Base64(String),
    /// Not a valid serialized histogram.
    #[error("histogram could not be decoded: {0}")]
    Decode(String),
    /// The histogram could not be encoded or written.
    #[error("histogram could not be written: {0}")]
    Encode(String),
}

/// The largest latency recorded exactly: one hour, in nanoseconds. Larger values are
/// recorded as this value and counted in [`LatencyHistogram::saturated`].
pub(crate) const MAX_LATENCY_NS: u64 = 3_600_000_000_000;

/// A latency histogram in nanoseconds: 1 ns to 1 hour, 3 significant digits.
#[derive(Clone)]
pub struct LatencyHistogram {
    h: Histogram<u64>,
    saturated: u64,
}

impl std::fmt::Debug for LatencyHistogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LatencyHistogram")
            .field("count", &self.count())
            .field("min", &self.min())
            .field("max", &self.max())
            .finish()
    }
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    /// An empty histogram.
    pub(crate) fn new() -> Self {
        // Bounds are constants that the crate accepts (low >= 1, high >= 2 * low, sigfig 3).
        let h = Histogram::new_with_bounds(1, MAX_LATENCY_NS, 3)
            .unwrap_or_else(|_| Histogram::new(3).unwrap_or_else(|_| unreachable!()));
        Self { h, saturated: 0 }
    }

    /// Records one value (clamped to the histogram's range).
    pub(crate) fn record(&mut self, ns: u64) {
        if ns > MAX_LATENCY_NS {
            self.saturated += 1;
        }
        self.h.saturating_record(ns.max(1));
    }

    /// Records `n` occurrences of a value.
    #[cfg(test)]
    pub(crate) fn record_n(&mut self, ns: u64, n: u64) {
        if ns > MAX_LATENCY_NS {
            self.saturated += n;
        }
        self.h.saturating_record_n(ns.max(1), n);
    }

    /// Adds every value of `other`.
    pub(crate) fn merge(&mut self, other: &LatencyHistogram) {
        // Same bounds on both sides, so adding cannot overflow the range.
        if self.h.add(&other.h).is_err() {
            for v in other.h.iter_recorded() {
                self.h
                    .saturating_record_n(v.value_iterated_to(), v.count_at_value());
            }
        }
        self.saturated += other.saturated;
    }

    /// Values recorded.
    pub fn count(&self) -> u64 {
        self.h.len()
    }

    /// Values that were above [`MAX_LATENCY_NS`].
    #[cfg(test)]
    pub(crate) fn saturated(&self) -> u64 {
        self.saturated
    }

    /// Smallest value (0 when empty).
    pub(crate) fn min(&self) -> u64 {
        if self.count() == 0 {
            0
        } else {
            self.h.min_nz()
        }
    }

    /// Largest value (0 when empty).
    pub(crate) fn max(&self) -> u64 {
        self.h.max()
    }

    /// Mean (0 when empty).
    pub(crate) fn mean(&self) -> f64 {
        if self.count() == 0 {
            0.0
        } else {
            self.h.mean()
        }
    }

    /// The value at percentile `p` (0 to 100); 0 when empty.
    pub(crate) fn value_at_percentile(&self, p: f64) -> u64 {
        if self.count() == 0 {
            0
        } else {
            self.h.value_at_percentile(p)
        }
    }

    /// The percentiles reports show: min, 25, 50, 75, 90, 95, 99, 99.9, 99.99, max.
    #[cfg(test)]
    pub(crate) fn percentiles(&self) -> Vec<(f64, u64)> {
        let mut out = vec![(0.0, self.min())];
        for p in [25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.9, 99.99] {
            out.push((p, self.value_at_percentile(p)));
        }
        out.push((100.0, self.max()));
        out
    }

    /// Empties the histogram.
    pub(crate) fn clear(&mut self) {
        self.h.reset();
        self.saturated = 0;
    }

    /// The histogram in HdrHistogram's compressed V2 format, base64 (readable by every
    /// HdrHistogram implementation).
    pub(crate) fn to_base64(&self) -> String {
        match self.to_v2_bytes() {
            Ok(bytes) => base64::engine::general_purpose::STANDARD.encode(bytes),
            // Serializing into memory fails only on an internal error of the encoder; an
            // empty string then reads back as an error, never as a wrong histogram.
            Err(_) => String::new(),
        }
    }

    /// The histogram in HdrHistogram's compressed V2 format (the bytes behind
    /// [`LatencyHistogram::to_base64`]).
    pub(crate) fn to_v2_bytes(&self) -> std::io::Result<Vec<u8>> {
        let mut bytes = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&self.h, &mut bytes)
            .map_err(|e| std::io::Error::other(format!("{e:?}")))?;
        Ok(bytes)
    }

    /// Reads `LatencyHistogram::to_base64`'s output.
    pub fn from_base64(text: &str) -> Result<Self, StatsError> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text.trim())
            .map_err(|e| StatsError::Base64(e.to_string()))?;
        Self::from_v2_bytes(&bytes)
    }

    /// Reads [`LatencyHistogram::to_v2_bytes`]'s output.
    pub(crate) fn from_v2_bytes(bytes: &[u8]) -> Result<Self, StatsError> {
        let decoded: Histogram<u64> = Deserializer::new()
            .deserialize(&mut &bytes[..])
            .map_err(|e| StatsError::Decode(format!("{e:?}")))?;
        let mut out = Self::new();
        for v in decoded.iter_recorded() {
            out.h
                .saturating_record_n(v.value_iterated_to(), v.count_at_value());
        }
        Ok(out)
    }
}

/// Writes `intervals` (start offset from `start_unix_secs`, duration, histogram; seconds)
/// as an HdrHistogram interval log, the format `HistogramLogProcessor` and plotting tools
/// read.
pub(crate) fn write_interval_log(
    w: &mut impl Write,
    start_unix_secs: f64,
    intervals: &[(f64, f64, &LatencyHistogram)],
) -> Result<(), StatsError> {
    let mut serializer = V2DeflateSerializer::new();
    let start =
        std::time::UNIX_EPOCH + std::time::Duration::from_secs_f64(start_unix_secs.max(0.0));
    let mut log = IntervalLogWriterBuilder::new()
        .add_comment("written by doppio hdr; values in nanoseconds")
        .with_start_time(start)
        .with_base_time(start)
        .with_max_value_divisor(1e6)
        .begin_log_with(w, &mut serializer)
        .map_err(|e| StatsError::Encode(e.to_string()))?;
    for (offset, duration, h) in intervals {
        log.write_histogram(
            &h.h,
            std::time::Duration::from_secs_f64(offset.max(0.0)),
            std::time::Duration::from_secs_f64(duration.max(0.0)),
            None,
        )
        .map_err(|e| StatsError::Encode(format!("{e:?}")))?;
    }
    Ok(())
}
