//! `--waterfall N`: one request in N of a doppio backend timed stage by stage, each stage a
//! histogram, so that the stages' means add up to the timed requests' mean latency.
//!
//! The stages, in order (the driver's from `doppio_driver::stages`, the rest the engine's):
//! - `schedule`: from the request's due time to the engine's send (0 without a rate);
//! - `bench`: the bench's own work inside the service time (binding values before the
//!   driver's call, reading the result after it: service time minus the driver's part);
//! - `queue`: the driver's call until the request is encoded into its connection's write
//!   buffer (routing, a stream id, encoding);
//! - `flush`: until its batch is handed to the runtime for sending (waiting for the
//!   connection's flusher task; glommio sends at once, io_uring in its next submission);
//! - `wire`: until the read that brings its answer arrives (the kernel both ways, the
//!   network, the node);
//! - `frame`: until its answer frame is split off and handed to its slot (frames of the
//!   same read before it);
//! - `wake`: until the caller's task runs again with the answer (the executor's queue);
//! - `decode`: until the driver's call returns to the bench (decoding the result).
//!
//! Each timed request's stages add up to its latency exactly (the `bench` stage is what the
//! others leave of the service time), so the means add up to the timed requests' mean
//! latency; percentiles of a sum are not the sum of percentiles, so only means add.

use crate::stats::LatencyHistogram;

/// A timed request's way through its driver, nanoseconds per stage (the backend's part of
/// the waterfall; `doppio_driver::stages` measured it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct DriverStages {
    /// The driver's call until the request was encoded into its connection's buffer.
    pub(crate) queue: u64,
    /// Until its batch was handed to the runtime.
    pub(crate) flush: u64,
    /// Until the read that brought its answer arrived.
    pub(crate) wire: u64,
    /// Until its answer frame was handed to its slot.
    pub(crate) frame: u64,
    /// Until the caller's task ran with the answer.
    pub(crate) wake: u64,
    /// Until the driver's call returned.
    pub(crate) decode: u64,
}

impl DriverStages {
    /// Their sum: the driver's call, end to end.
    pub(crate) fn total(&self) -> u64 {
        self.queue + self.flush + self.wire + self.frame + self.wake + self.decode
    }
}

/// The stages, in the order a request passes them.
pub(crate) const STAGES: [&str; 8] = [
    "schedule", "bench", "queue", "flush", "wire", "frame", "wake", "decode",
];

/// One worker's (or a phase's, merged) timed requests, stage by stage.
#[derive(Debug, Clone)]
pub struct Waterfall {
    /// Each stage's histogram, in [`STAGES`] order.
    pub(crate) stages: Vec<LatencyHistogram>,
    /// Each stage's exact sum, nanoseconds (the histograms round).
    pub(crate) sums_ns: Vec<u128>,
    /// The timed requests' latencies (due time to end).
    pub(crate) end_to_end: LatencyHistogram,
    /// Their exact sum, nanoseconds.
    pub(crate) end_to_end_sum_ns: u128,
    /// Requests timed.
    pub(crate) timed: u64,
}

impl Default for Waterfall {
    fn default() -> Self {
        Waterfall {
            stages: (0..STAGES.len()).map(|_| LatencyHistogram::new()).collect(),
            sums_ns: vec![0; STAGES.len()],
            end_to_end: LatencyHistogram::new(),
            end_to_end_sum_ns: 0,
            timed: 0,
        }
    }
}

impl Waterfall {
    /// Records a timed request: sent `lateness` after its due time, served in `service`
    /// (send to end), of which the driver's call took `driver`'s stages.
    pub(crate) fn record(&mut self, lateness: u64, service: u64, driver: &DriverStages) {
        let bench = service.saturating_sub(driver.total());
        // A driver's part longer than the service time (clocks read at slightly different
        // places) is cut at it, so that the stages still add up to the latency.
        let mut left = service - bench;
        let mut cut = |x: u64| {
            let x = x.min(left);
            left -= x;
            x
        };
        let values = [
            lateness,
            bench,
            cut(driver.queue),
            cut(driver.flush),
            cut(driver.wire),
            cut(driver.frame),
            cut(driver.wake),
            cut(driver.decode),
        ];
        for (k, v) in values.into_iter().enumerate() {
            self.stages[k].record(v);
            self.sums_ns[k] += u128::from(v);
        }
        let latency = lateness + service;
        self.end_to_end.record(latency);
        self.end_to_end_sum_ns += u128::from(latency);
        self.timed += 1;
    }

    /// Adds another worker's or phase's.
    pub(crate) fn merge(&mut self, other: &Waterfall) {
        for (a, b) in self.stages.iter_mut().zip(&other.stages) {
            a.merge(b);
        }
        for (a, b) in self.sums_ns.iter_mut().zip(&other.sums_ns) {
            *a += b;
        }
        self.end_to_end.merge(&other.end_to_end);
        self.end_to_end_sum_ns += other.end_to_end_sum_ns;
        self.timed += other.timed;
    }

    /// Each stage's exact mean, nanoseconds, in [`STAGES`] order.
    pub(crate) fn means_ns(&self) -> Vec<f64> {
        self.sums_ns
            .iter()
            .map(|s| {
                if self.timed == 0 {
                    0.0
                } else {
                    *s as f64 / self.timed as f64
                }
            })
            .collect()
    }

    /// The timed requests' exact mean latency, nanoseconds.
    pub(crate) fn end_to_end_mean_ns(&self) -> f64 {
        if self.timed == 0 {
            0.0
        } else {
            self.end_to_end_sum_ns as f64 / self.timed as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_add_up_to_the_latency_request_by_request() {
        let mut w = Waterfall::default();
        let d = DriverStages {
            queue: 100,
            flush: 200,
            wire: 5_000,
            frame: 50,
            wake: 300,
            decode: 150,
        };
        // Sent 1 us late, served in 7 us, of which the driver's call took 5.8 us.
        w.record(1_000, 7_000, &d);
        assert_eq!(w.timed, 1);
        let means = w.means_ns();
        assert_eq!(
            means,
            vec![1_000.0, 1_200.0, 100.0, 200.0, 5_000.0, 50.0, 300.0, 150.0]
        );
        let sum: f64 = means.iter().sum();
        assert_eq!(sum, w.end_to_end_mean_ns());
        assert_eq!(w.end_to_end_mean_ns(), 8_000.0);
        // A driver's part longer than the service time is cut at it: still adds up.
        let mut cut = Waterfall::default();
        cut.record(0, 5_000, &d);
        let means = cut.means_ns();
        assert_eq!(means[1], 0.0, "no bench time left");
        assert_eq!(means.iter().sum::<f64>(), 5_000.0);
        assert_eq!(means[7], 0.0, "the last stages lose what is over");
        // Merging adds the requests.
        w.merge(&cut);
        assert_eq!(w.timed, 2);
        assert_eq!(w.end_to_end_mean_ns(), 6_500.0);
        assert_eq!(w.means_ns().iter().sum::<f64>(), 6_500.0);
        assert_eq!(w.stages[4].count(), 2);
    }
}
