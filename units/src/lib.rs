//! `doppio-units`: one grammar for durations and counts, read the same way by every option
//! of the bench (`doppio`), its workload files and the stub server's fault rules.
//!
//! Modules:
//! - [`duration`](mod@duration): a time is a number with its unit (`500us`, `5ms`, `1.5s`, `2m`,
//!   `1h30m`); a bare number is refused, and months, weeks and years are not units.
//! - [`count`](mod@count): a count is a whole number (`10_000`) or a number with a decimal suffix
//!   (`10k`, `1.5M`, `1G`): `M` is a million, never a month.
//!
//! Where an option takes either (the bench's `-d` and `--warmup`), a number is a count and a
//! number with a time unit is a time: `1M` is a million iterations, `1m` a minute.

pub mod count;
pub mod duration;

pub use count::{count, CountError};
pub use duration::{duration, DurationError};
