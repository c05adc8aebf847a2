//! Fault rules as data: a condition on a request paired with a reaction.
//!
//! ```toml
//! seed = 7                          # randomness of probabilities and delays (repeatable)
//!
//! [[rule]]
//! name = "slow reads"               # shown in the log and in fire counts
//! when = { opcode = "EXECUTE", statement = "SELECT", probability = 0.1 }
//! then = { delay = { exponential = "2ms" } }
//!
//! [[rule]]
//! name = "overloaded"
//! when = { every = 100, after = "1s", until = "5s" }
//! then = { error = { code = "overloaded", message = "try later" } }
//! ```
//!
//! Conditions (all given ones must hold; none means every request): `opcode` (OPTIONS,
//! STARTUP, REGISTER, QUERY, PREPARE, EXECUTE, BATCH), `statement` (a substring of the
//! QUERY/PREPARE text, or of the prepared statement's text for EXECUTE), `connection` (the
//! Nth connection the stub accepted, from 1), `node` (the node of a cluster stub the request
//! reached, from 0; a single stub is node 0), `every` (every Nth request that met the other
//! conditions), `probability`, a time window `after`/`until` since the stub started, and
//! `serial_consistency` (the level a QUERY, EXECUTE or BATCH carries, `SERIAL` or
//! `LOCAL_SERIAL`, or `none`: what a client actually sent).
//!
//! Reactions: `delay` (`fixed`, `uniform = ["1ms", "5ms"]`, `exponential` mean, or
//! `ramp = ["1ms", "5ms"], over = "20s"`: a drift, the delay growing steadily from the first
//! to the second over that long since the stub started, then staying; by equal steps, or with
//! `growth = "geometric"` by an equal factor per second, so that answers slow by the same
//! share in every stretch of the run), `error`
//! (any CQL error code by name or number, with its required fields filled in), `stall`
//! (the connection stops answering and reading for a duration), `"drop"` (the connection is
//! closed), `malformed` (`bad_version`, `oversized_length`, `truncated`, `corrupt_lz4`,
//! `bad_body`, each a broken frame in place of the answer), `"wrong_stream"` (the answer carries a stream id
//! the client never used), `rate_limit = { op = "read" | "write", rejected_by_coordinator }`
//! (ScyllaDB's rate-limit error on a connection that turned that extension on, Config_error
//! on others, as ScyllaDB does).
//!
//! Durations (`after`, `until`, delays, `stall`) read as the bench reads its options (the
//! crate `doppio-units`): a number with its unit (`500us`, `2ms`, `1.5s`, `2m`, `1h30m`); a
//! bare number is refused with a hint.
//!
//! Invariant: the first rule whose condition holds decides; a request matches at most one.

//!
//! Files (this one is a map; nothing is defined here):
//! - `model`: the rules as data ([`Rules`], [`Rule`], [`Condition`], [`Reaction`], [`Delay`],
//!   [`Malformed`]).
//! - `parse`: the TOML file read into them ([`Rules::parse`], [`Rules::load`], [`RulesError`],
//!   [`error_code_named`]).
//! - `matcher`: the rules applied to requests ([`Matcher`], one per shard, and the [`Probe`]
//!   a request shows them).

mod matcher;
mod model;
mod parse;
#[cfg(test)]
mod tests;

pub use matcher::{Matcher, Probe};
pub use model::{Condition, Delay, Malformed, Reaction, Rule, Rules};
pub use parse::{error_code_named, RulesError};
