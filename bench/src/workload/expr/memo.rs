//! The per-thread memory of named sub-expressions' numbers ([`Node::Memo`]): a fixed table
//! per thread, nothing allocated, locked or shared per request.

use std::cell::Cell;

use super::error::EvalError;
use super::scope::Env;
use super::tree::Node;
use super::value::Value;

/// One remembered number of a [`Node::Memo`]: its id (0: empty), the scope, the value.
#[derive(Clone, Copy)]
struct Slot {
    id: u64,
    env: Env,
    value: Number,
}

/// A remembered value: the numbers are the only values worth keeping (and borrow nothing).
#[derive(Clone, Copy)]
enum Number {
    Int(i64),
    Float(f64),
}

/// Slots of the per-thread memory, direct-mapped by id and scope.
const SLOTS: usize = 256;

thread_local! {
    /// Each thread's remembered numbers of named sub-expressions: a fixed table, so a hit is
    /// a hash and a compare, and nothing is allocated, locked or shared between threads. An
    /// entry matches only its own id and scope, and a value is a pure function of both, so a
    /// stale entry is never wrong, only replaced.
    static MEMORY: [Cell<Slot>; SLOTS] = const {
        [const {
            Cell::new(Slot {
                id: 0,
                env: Env { i: 0, j: 0, key: 0 },
                value: Number::Int(0),
            })
        }; SLOTS]
    };
}

/// The value of the memoised sub-expression `body` (id `id`) in scope `env`: remembered, or
/// evaluated (by `eval`, the evaluator) and remembered.
pub(super) fn remembered<'a>(
    id: u64,
    body: &'a Node,
    env: Env,
    top: bool,
    eval: impl FnOnce(&'a Node, Env) -> Result<Value<'a>, EvalError>,
) -> Result<Value<'a>, EvalError> {
    let env = if top { Env::top(env.i) } else { env };
    // Multiply-shift: the high byte of a product that every bit of id, key and j reaches.
    let h = (id ^ env.key.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ env.j.rotate_left(29))
        .wrapping_mul(0xbf58_476d_1ce4_e5b9);
    let at = (h >> 56) as usize % SLOTS;
    let hit = MEMORY.with(|m| {
        let slot = m[at].get();
        (slot.id == id && slot.env == env).then_some(slot.value)
    });
    match hit {
        Some(Number::Int(v)) => return Ok(Value::Int(v)),
        Some(Number::Float(v)) => return Ok(Value::Float(v)),
        None => {}
    }
    let value = eval(body, env)?;
    let number = match value {
        Value::Int(v) => Number::Int(v),
        Value::Float(v) => Number::Float(v),
        _ => return Ok(value),
    };
    MEMORY.with(|m| {
        m[at].set(Slot {
            id,
            env,
            value: number,
        });
    });
    Ok(value)
}
