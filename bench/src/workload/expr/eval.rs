//! The evaluator: a compiled tree's value for an iteration, function calls and arithmetic
//! included, without allocation; and a composite's elements, evaluated on demand.

use super::error::EvalError;
use super::memo::remembered;
use super::random::{mix, unit, zipf_sample, ZipfConsts};
use super::scope::Env;
use super::tree::{BinOp, Expr, Func, Node};
use super::value::{Composite, CompositeKind, Value};
use crate::workload::dist::Distribution;

impl Expr {
    /// The value for iteration `i`.
    pub fn eval(&self, i: u64) -> Result<Value<'_>, EvalError> {
        eval(&self.root, Env::top(i))
    }
}

impl<'a> Composite<'a> {
    /// Element `j` (0-based): for a map, `part` 0 is the key and 1 the value; for a tuple,
    /// field `j`. `j` need not be below `len` (a shape check samples element 0 of an empty
    /// collection).
    pub(crate) fn element(&self, j: u32, part: usize) -> Result<Value<'a>, EvalError> {
        let Node::Call { args, site, .. } = self.node else {
            return Err(EvalError("not a composite"));
        };
        let (node, env) = match self.kind {
            CompositeKind::Tuple => (args.get(j as usize), self.env),
            CompositeKind::Map => (args.get(1 + part), self.env.element(*site, u64::from(j))),
            _ => (args.get(1), self.env.element(*site, u64::from(j))),
        };
        match node {
            Some(n) => eval(n, env),
            None => Err(EvalError("no such element")),
        }
    }
}

fn eval(node: &Node, env: Env) -> Result<Value<'_>, EvalError> {
    Ok(match node {
        Node::Iter => Value::Int(env.i as i64),
        Node::Pos => Value::Int(env.j as i64),
        Node::Int(v) => Value::Int(*v),
        Node::Float(v) => Value::Float(*v),
        Node::Bool(b) => Value::Bool(*b),
        Node::Str(s) => Value::Str(s),
        Node::Null => Value::Null,
        Node::Neg(a) => match eval(a, env)? {
            Value::Int(v) => Value::Int(v.wrapping_neg()),
            Value::Float(v) => Value::Float(-v),
            _ => return Err(EvalError("only numbers can be negated")),
        },
        Node::Bin(op, a, b) => arith(*op, eval(a, env)?, eval(b, env)?)?,
        Node::Memo { id, body, top } => remembered(*id, body, env, *top, eval)?,
        Node::Call {
            func,
            args,
            site,
            zipf,
            dist,
        } => {
            let kind = match func {
                Func::List => CompositeKind::List,
                Func::Set => CompositeKind::Set,
                Func::Map => CompositeKind::Map,
                Func::Vector => CompositeKind::Vector,
                Func::Tuple => CompositeKind::Tuple,
                _ => return call(*func, args, *site, (zipf.as_ref(), dist.as_deref()), env),
            };
            let len = if kind == CompositeKind::Tuple {
                args.len() as u64
            } else {
                match args.first() {
                    Some(n) => as_i64(eval(n, env)?)? as u64,
                    None => return Err(EvalError("missing argument")),
                }
            };
            // The count is a CQL [int]; a negative one wrapped to a huge u64 lands here too.
            let len = u32::try_from(len)
                .ok()
                .filter(|&n| n <= i32::MAX as u32)
                .ok_or(EvalError("element count out of range"))?;
            Value::Composite(Composite {
                node,
                env,
                len,
                kind,
            })
        }
    })
}

fn arith(op: BinOp, a: Value<'_>, b: Value<'_>) -> Result<Value<'static>, EvalError> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Ok(Value::Int(match op {
            BinOp::Add => x.wrapping_add(y),
            BinOp::Sub => x.wrapping_sub(y),
            BinOp::Mul => x.wrapping_mul(y),
            BinOp::Div if y == 0 => return Err(EvalError("division by zero")),
            BinOp::Div => x.wrapping_div(y),
            BinOp::Rem if y == 0 => return Err(EvalError("remainder by zero")),
            // Euclidean: `hash(i) % n` is always in [0, n).
            BinOp::Rem => x.wrapping_rem_euclid(y),
        })),
        (x, y) => {
            let (Some(x), Some(y)) = (as_f64(x), as_f64(y)) else {
                return Err(EvalError("arithmetic needs numbers"));
            };
            Ok(Value::Float(match op {
                BinOp::Add => x + y,
                BinOp::Sub => x - y,
                BinOp::Mul => x * y,
                BinOp::Div => x / y,
                BinOp::Rem => x.rem_euclid(y),
            }))
        }
    }
}

fn as_f64(v: Value<'_>) -> Option<f64> {
    match v {
        Value::Int(x) => Some(x as f64),
        Value::Float(x) => Some(x),
        _ => None,
    }
}

fn as_i64(v: Value<'_>) -> Result<i64, EvalError> {
    match v {
        Value::Int(x) => Ok(x),
        Value::Float(x) => Ok(x as i64),
        _ => Err(EvalError("expected a number")),
    }
}

/// The random input of a call: its explicit argument if given, else the iteration, mixed
/// with the call site.
fn draw(site: u64, x: u64, k: u64) -> u64 {
    mix(mix(x ^ site).wrapping_add(k))
}

fn call(
    func: Func,
    args: &[Node],
    site: u64,
    (zipf, dist): (Option<&ZipfConsts>, Option<&Distribution>),
    env: Env,
) -> Result<Value<'static>, EvalError> {
    // Random draws come from the scope's key: the iteration at the top level, the iteration
    // and the element's position inside a collection.
    let i = env.key;
    let arg = |k: usize| -> Result<Value<'_>, EvalError> {
        match args.get(k) {
            Some(a) => eval(a, env),
            None => Err(EvalError("missing argument")),
        }
    };
    // An explicit seed argument `k` stands for the call site: the same everywhere.
    let seeded = |site: u64, k: usize| -> Result<u64, EvalError> {
        match args.get(k) {
            Some(a) => Ok(mix(as_i64(eval(a, env)?)? as u64 ^ 0x5eed_0000)),
            None => Ok(site),
        }
    };
    let source = |k: usize| -> Result<u64, EvalError> {
        match args.get(k) {
            Some(a) => Ok(as_i64(eval(a, env)?)? as u64),
            None => Ok(i),
        }
    };
    Ok(match func {
        Func::Hash => {
            let x = as_i64(arg(0)?)? as u64;
            let seed = if args.len() > 1 {
                as_i64(arg(1)?)? as u64
            } else {
                0
            };
            // Non-negative, so that `hash(i) % n` reads naturally.
            Value::Int((mix(x ^ mix(seed)) >> 1) as i64)
        }
        Func::Uniform => {
            let (lo, hi) = (arg(0)?, arg(1)?);
            let h = draw(site, i, 0);
            match (lo, hi) {
                (Value::Int(lo), Value::Int(hi)) => {
                    if hi <= lo {
                        Value::Int(lo)
                    } else {
                        let span = hi.wrapping_sub(lo) as u64;
                        // Multiply-shift: unbiased enough for benchmarks, no division.
                        let off = ((u128::from(h) * u128::from(span)) >> 64) as i64;
                        Value::Int(lo.wrapping_add(off))
                    }
                }
                (lo, hi) => {
                    let (Some(lo), Some(hi)) = (as_f64(lo), as_f64(hi)) else {
                        return Err(EvalError("uniform needs numbers"));
                    };
                    Value::Float(lo + unit(h) * (hi - lo))
                }
            }
        }
        Func::Normal => {
            let (Some(mean), Some(sd)) = (as_f64(arg(0)?), as_f64(arg(1)?)) else {
                return Err(EvalError("normal needs numbers"));
            };
            // Box–Muller from two independent draws; 1 - u keeps the log finite.
            let u1 = 1.0 - unit(draw(site, i, 1));
            let u2 = unit(draw(site, i, 2));
            let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
            Value::Float(mean + sd * z)
        }
        Func::Zipf => {
            let Some(z) = zipf else {
                return Err(EvalError("zipf constants missing"));
            };
            Value::Int(zipf_sample(z, |k| unit(draw(site, i, 16 + k))))
        }
        Func::Uuid => {
            let x = source(0)?;
            let site = seeded(site, 1)?;
            let hi = draw(site, x, 3);
            let lo = draw(site, x, 4);
            // Version 4 and the RFC 4122 variant, as random UUIDs carry.
            let v = (u128::from(hi) << 64) | u128::from(lo);
            let v = (v & !(0xf << 76)) | (0x4 << 76);
            let v = (v & !(0x3 << 62)) | (0x2 << 62);
            Value::Uuid(v)
        }
        Func::Text | Func::Blob => {
            let len = as_i64(arg(0)?)?;
            let len = u32::try_from(len).map_err(|_| EvalError("length out of range"))?;
            let seed = draw(seeded(site, 2)?, source(1)?, 5);
            if func == Func::Text {
                Value::Text { seed, len }
            } else {
                Value::Blob { seed, len }
            }
        }
        Func::Dist => {
            let Some(d) = dist else {
                return Err(EvalError("distribution missing"));
            };
            let v = match args.get(1) {
                Some(x) => {
                    let x = as_i64(eval(x, env)?)? as u64;
                    d.sample(x, x)
                }
                None => d.sample(env.i, mix(i ^ site)),
            };
            Value::Int(v)
        }
        Func::Int => Value::Int(as_i64(arg(0)?)?),
        Func::Float => match as_f64(arg(0)?) {
            Some(f) => Value::Float(f),
            None => return Err(EvalError("float needs a number")),
        },
        // Composites are made in `eval`, which never calls here for them.
        Func::List | Func::Set | Func::Map | Func::Vector | Func::Tuple => {
            return Err(EvalError("a composite is not a scalar function"))
        }
    })
}
