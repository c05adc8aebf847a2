//! Rate schedules (`-r`): when each iteration of a rate-limited phase is due.
//!
//! A schedule is a list of parts, separated by commas, run one after the other from the
//! phase's start; each rate is requests per second over all workers (a count such as `500`,
//! `2.5`, `10k`, `1.5M`), each duration a duration with its unit (`500ms`, `30s`, `2m`):
//!
//! - `RATE` or `RATE/DURATION` (also `step:RATE[/DURATION]`): a constant rate;
//! - `ramp:FROM..TO/DURATION`: linearly from `FROM` to `TO`;
//! - `hold:DURATION`: the rate the previous part ended at;
//! - `sine:MEAN,AMPLITUDE,PERIOD[/DURATION]`: `MEAN + AMPLITUDE * sin(2 pi t / PERIOD)`, `t`
//!   from the part's start (the amplitude at most the mean: a rate is never below 0);
//! - `poisson` or `poisson:SEED` (an option, anywhere in the list, at most once): arrivals
//!   at exponential gaps around the scheduled rate, drawn from a seeded generator (seed 1
//!   unless given), so that a run is reproducible.
//!
//! Only the last part may go without a duration (it lasts for ever). After a last part with
//! a duration, the rate it ended at holds; the phase's own limit (`-d`) still ends the run.
//! Each phase (warmup, each measured segment) starts the schedule anew.
//!
//! The maths: with `L(t)` the integral of the rate from 0 to `t` (all workers), request `n`
//! of a worker (of `W`) is due at the first `t` where `L(t) / W` reaches `n`. Ramps and
//! steps invert in closed form (a quadratic), a sine by a bracketed Newton iteration from the
//! previous due time (a few steps, bounded). A part at rate 0 is skipped over: the next
//! request is due where the rate becomes positive again, or never (the worker stops asking).
//!
//! Each fiber keeps its own `Pacer` (a few numbers, nothing allocated) and steps it from
//! one of its iterations to its next: with `C` fibers on the worker, `C` requests further.
//! With Poisson arrivals each fiber draws its own exponential gaps (mean `C` requests), from
//! a generator seeded by the schedule's seed, the worker and the fiber: the fibers' arrivals
//! together are a Poisson process at the worker's share of the rate (a sum of independent
//! Poisson processes is one).
//!
//! Children: `model`, the schedule itself ([`RateSchedule`]: its parts laid out, the rate
//! and the requests due at any moment); `part`, one part's shape and the maths of its rate
//! (its integral and that integral's inverse); `parse`, a schedule read from its text (or a
//! constant one made); `pacer`, each iteration's due time (`Pacer`); `error`, why a text is
//! not a schedule (`ScheduleError`).

mod error;
mod model;
mod pacer;
mod parse;
mod part;

#[cfg(test)]
mod tests;

pub(crate) use error::ScheduleError;
pub use model::RateSchedule;
