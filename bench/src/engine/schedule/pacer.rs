//! Each iteration's due time: one fiber's [`Pacer`], stepped from one of its due times to
//! its next, with Poisson arrivals' seeded generator.

use super::model::RateSchedule;
use super::part::SchedulePart;

impl RateSchedule {
    /// The pacer of fiber `fiber` of `fibers` on worker `worker` of `workers`.
    pub(crate) fn pacer(
        &self,
        worker: usize,
        workers: usize,
        fiber: usize,
        fibers: usize,
    ) -> Pacer<'_> {
        let workers = workers.max(1) as f64;
        let fibers = fibers.max(1) as f64;
        let step = fibers * workers;
        let mut rng = self.poisson.map(|seed| {
            let mut r = SplitMix64(seed);
            // Distinct streams per worker and fiber, mixed through the generator.
            r.0 ^= SplitMix64(((worker as u64) << 32) | fiber as u64).next();
            r
        });
        let pending = match rng.as_mut() {
            Some(r) => step * r.exponential(),
            // Uniform: the worker's ordinal `fiber` is the first of this fiber.
            None => fiber as f64 * workers,
        };
        Pacer {
            parts: &self.parts,
            part: 0,
            tau: 0.0,
            done: 0.0,
            pending,
            step,
            rng,
        }
    }
}

/// One fiber's position in the schedule: steps from one of its due times to its next with
/// a few floating-point operations (a square root for a ramp, a few sines for a sine wave),
/// nothing allocated.
#[derive(Debug, Clone)]
pub(crate) struct Pacer<'a> {
    parts: &'a [SchedulePart],
    /// The part of the last due time.
    part: usize,
    /// The last due time within the part, seconds from its start.
    tau: f64,
    /// Requests (all workers) due in the part up to `tau`.
    done: f64,
    /// Requests (all workers) to the next due time.
    pending: f64,
    /// Requests (all workers) between two due times of the fiber, on average.
    step: f64,
    /// Poisson arrivals' generator.
    rng: Option<SplitMix64>,
}

impl Pacer<'_> {
    /// The next due time, seconds from the phase's start; `None` when the rate stays 0
    /// from here on (nothing more is ever due).
    pub(crate) fn next_due(&mut self) -> Option<f64> {
        let mut need = self.pending;
        self.pending = match self.rng.as_mut() {
            Some(r) => self.step * r.exponential(),
            None => self.step,
        };
        loop {
            let part = self.parts.get(self.part)?;
            let left = part.count - self.done;
            // A part with nothing left (one at rate 0) is skipped rather than ended in.
            if need < left || (need <= left && left > 0.0) {
                self.done += need;
                self.tau = part.invert(self.done, self.tau);
                return Some(part.start + self.tau);
            }
            need -= left.max(0.0);
            self.part += 1;
            self.done = 0.0;
            self.tau = 0.0;
        }
    }
}

/// A small seeded generator (Steele, Lea and Flood's SplitMix64): enough for arrival gaps,
/// and the same sequence for the same seed everywhere.
#[derive(Debug, Clone, Copy)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// An exponential variate of mean 1.
    fn exponential(&mut self) -> f64 {
        // Uniform in [0, 1) from the top 53 bits; 1 - u is in (0, 1], so its log is finite.
        let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        -(1.0 - u).ln()
    }
}
