//! Argument generators: small expressions parsed once into a tree and evaluated per iteration
//! without allocation.
//!
//! Every generator is a pure function of the iteration number `i` (and of its position in
//! the workload), so a run repeats exactly and any iteration can be recomputed alone.
//!
//! Grammar (whitespace ignored):
//! ```text
//! expr    := term (('+' | '-') term)*
//! term    := unary (('*' | '/' | '%') unary)*
//! unary   := '-' unary | atom
//! atom    := INT | FLOAT | 'string' | true | false | null | i | j | PARAM
//!          | NAME '(' [expr (',' expr)*] ')' | '(' expr ')'
//! ```
//! Functions: `hash(x[, seed])`, `uniform(lo, hi)` (integers in `[lo, hi)`, floats if either
//! bound is a float), `normal(mean, stdev)`, `zipf(n, s)` (integers in `[1, n]`, exact
//! rejection-inversion sampling), `uuid([x])`, `text(len[, x])`, `blob(len[, x])`,
//! `int(x)`, `float(x)`. Without `x`, the random ones draw from the iteration.
//! `dist('SPEC'[, x])` samples a cassandra-stress distribution ([`super::dist`]: `SPEC` a
//! constant string such as `'GAUSSIAN(1..100,3)'`); with `x` it is a function of `SPEC` and
//! `x` alone, the same at every call site (so that a query binds the value an insert wrote),
//! and `SEQ` gives its `x`-th value. `text(len, x, seed)`, `blob(len, x, seed)` and
//! `uuid(x, seed)` are, likewise, the same at every call site for the same arguments.
//!
//! Named sub-expressions (a workload's `[vars]`, [`Expr::compile_with`]) are written once and
//! inlined where they are named, call sites and all: every use of one has the same value.
//!
//! Composite values: `list(n, e)`, `set(n, e)`, `vector(n, e)` (`n` elements, each the value
//! of `e`), `map(n, k, v)` (`n` entries), `tuple(a, b, ...)` (also spelt `udt(...)`: binds to
//! a tuple column, or to a user type's fields in order). `n` is any expression, evaluated per
//! iteration where the collection appears. Inside an element expression (`e`, `k`, `v`), `j`
//! is the element's position (0 to n-1, the innermost collection's), and every random
//! function draws from the iteration *and* the element's position (and the call site), so
//! elements differ; `i` stays the iteration. A tuple's fields are evaluated where the tuple
//! is (no new `j`). A composite [`Value`] is a reference to its compiled node and the
//! iteration ([`Composite`]): elements are evaluated when they are encoded, never stored.

use std::cell::Cell;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use super::dist::Distribution;

/// Why an expression could not be compiled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("in `{source_text}` at byte {at}: {message}")]
pub struct ExprError {
    /// The expression.
    pub source_text: String,
    /// Byte offset of the problem.
    pub at: usize,
    /// What is wrong.
    pub message: String,
}

/// A generated value, before it is encoded for a column.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Float(f64),
    /// A boolean.
    Bool(bool),
    /// `len` alphanumeric bytes derived from `seed`.
    Text {
        /// Determines the content.
        seed: u64,
        /// Length in bytes.
        len: u32,
    },
    /// `len` arbitrary bytes derived from `seed`.
    Blob {
        /// Determines the content.
        seed: u64,
        /// Length in bytes.
        len: u32,
    },
    /// A literal string from the workload.
    Str(&'a str),
    /// A 128-bit UUID (random-version layout).
    Uuid(u128),
    /// A list, set, map, vector or tuple: evaluated element by element when encoded.
    Composite(Composite<'a>),
    /// CQL null.
    Null,
}

/// Which composite generator made a [`Composite`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompositeKind {
    /// `list(n, e)`.
    List,
    /// `set(n, e)`.
    Set,
    /// `map(n, k, v)`.
    Map,
    /// `vector(n, e)`.
    Vector,
    /// `tuple(a, b, ...)`.
    Tuple,
}

impl CompositeKind {
    /// The generator's name.
    pub fn name(self) -> &'static str {
        match self {
            CompositeKind::List => "list",
            CompositeKind::Set => "set",
            CompositeKind::Map => "map",
            CompositeKind::Vector => "vector",
            CompositeKind::Tuple => "tuple",
        }
    }
}

/// The scope an expression is evaluated in: the iteration, the position of the innermost
/// enclosing element (`j`), and the key random functions draw from (the iteration at the top
/// level; mixed with each enclosing element's position inside collections).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Env {
    i: u64,
    j: u64,
    key: u64,
}

impl Env {
    fn top(i: u64) -> Self {
        Self { i, j: 0, key: i }
    }

    /// The scope of element `j` of the collection made at call site `site`.
    fn element(self, site: u64, j: u64) -> Self {
        Self {
            i: self.i,
            j,
            key: mix(mix(self.key ^ site).wrapping_add(j)),
        }
    }
}

/// A composite value of one iteration: its compiled generator and its scope, with the
/// element count already evaluated. Copy, and no bigger than a few words: the elements are
/// evaluated on demand by [`Composite::element`], so nothing is allocated.
#[derive(Clone, Copy, PartialEq)]
pub struct Composite<'a> {
    node: &'a Node,
    env: Env,
    len: u32,
    kind: CompositeKind,
}

impl fmt::Debug for Composite<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({} elements)", self.kind.name(), self.len)
    }
}

impl<'a> Composite<'a> {
    /// The generator that made it.
    pub fn kind(&self) -> CompositeKind {
        self.kind
    }

    /// Elements (map entries, tuple fields).
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The count given as a constant in the expression (`vector(3, ...)`), if it was.
    pub fn constant_len(&self) -> Option<i64> {
        match self.node {
            Node::Call { func, args, .. } if *func != Func::Tuple => match args.first() {
                Some(Node::Int(n)) => Some(*n),
                _ => None,
            },
            Node::Call { args, .. } => Some(args.len() as i64),
            _ => None,
        }
    }

    /// Element `j` (0-based): for a map, `part` 0 is the key and 1 the value; for a tuple,
    /// field `j`. `j` need not be below `len` (a shape check samples element 0 of an empty
    /// collection).
    pub fn element(&self, j: u32, part: usize) -> Result<Value<'a>, EvalError> {
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

/// Why a value could not be computed (division by zero, a type mismatch found at run time).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct EvalError(pub &'static str);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Func {
    Hash,
    Uniform,
    Normal,
    Zipf,
    Uuid,
    Text,
    Blob,
    Int,
    Float,
    List,
    Set,
    Map,
    Vector,
    Tuple,
    Dist,
}

/// Zipf sampler constants, computed once at compile time.
#[derive(Debug, Clone, Copy, PartialEq)]
struct ZipfConsts {
    n: f64,
    s: f64,
    h_integral_x1: f64,
    h_integral_n: f64,
    sc: f64,
}

/// A compiled expression tree.
#[derive(Debug, Clone, PartialEq)]
enum Node {
    Iter,
    /// `j`: the position of the innermost enclosing collection element.
    Pos,
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
    Null,
    Neg(Box<Node>),
    Bin(BinOp, Box<Node>, Box<Node>),
    /// A function call; `site` makes independent call sites draw independent numbers.
    Call {
        func: Func,
        args: Vec<Node>,
        site: u64,
        zipf: Option<ZipfConsts>,
        /// `dist`'s distribution, parsed once.
        dist: Option<Box<Distribution>>,
    },
    /// A named sub-expression that samples a distribution, inlined with its `id` (one per
    /// compiled var): its number is remembered per thread for the scope it was evaluated in
    /// ([`remembered`]), so the other uses of the var in one iteration's arguments do not
    /// sample again.
    Memo {
        id: u64,
        body: Box<Node>,
        /// The body reads nothing of the scope but the iteration (no `j`, no random draw
        /// from the scope's key), so one value serves every scope of the iteration: inside
        /// each element of a collection too.
        top: bool,
    },
}

/// Ids of compiled expressions, for [`Node::Memo`] (taken at compile time, never per request).
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

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
/// evaluated and remembered.
fn remembered<'a>(id: u64, body: &'a Node, env: Env, top: bool) -> Result<Value<'a>, EvalError> {
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

/// Whether `node` reads nothing of its scope but the iteration: no `j`, and no function that
/// draws from the scope's key (`uniform`, `normal`, `zipf`, and `uuid`, `text`, `blob` and
/// `dist` without their `x`); no collection (its elements are made in a scope of their own).
fn iteration_only(node: &Node) -> bool {
    match node {
        Node::Pos => false,
        Node::Neg(a) => iteration_only(a),
        Node::Bin(_, a, b) => iteration_only(a) && iteration_only(b),
        Node::Memo { body, .. } => iteration_only(body),
        Node::Call { func, args, .. } => {
            let given = match func {
                Func::Hash | Func::Int | Func::Float => true,
                Func::Uuid => !args.is_empty(),
                Func::Text | Func::Blob | Func::Dist => args.len() >= 2,
                Func::Uniform
                | Func::Normal
                | Func::Zipf
                | Func::List
                | Func::Set
                | Func::Map
                | Func::Vector
                | Func::Tuple => false,
            };
            given && args.iter().all(iteration_only)
        }
        Node::Iter | Node::Int(_) | Node::Float(_) | Node::Bool(_) | Node::Str(_) | Node::Null => {
            true
        }
    }
}

/// Whether `node` samples a distribution somewhere (worth remembering: a hash or an
/// arithmetic step costs less than the lookup).
fn samples(node: &Node) -> bool {
    match node {
        Node::Call { func, args, .. } => {
            matches!(func, Func::Dist | Func::Normal | Func::Zipf) || args.iter().any(samples)
        }
        Node::Neg(a) => samples(a),
        Node::Bin(_, a, b) => samples(a) || samples(b),
        Node::Memo { .. } => true,
        _ => false,
    }
}

/// A compiled generator.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    text: String,
    root: Node,
    /// Its id as a named sub-expression ([`Node::Memo`]).
    id: u64,
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// splitmix64: a fast, well-mixed 64-bit hash (the finaliser of SplitMix64).
pub fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// A uniform float in [0, 1) from 53 bits of `h`.
fn unit(h: u64) -> f64 {
    (h >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

impl Expr {
    /// Parses `text`. `param` resolves identifiers other than `i` (workload parameters);
    /// `site_seed` distinguishes this expression's random streams from other expressions'.
    pub fn compile(
        text: &str,
        site_seed: u64,
        param: &dyn Fn(&str) -> Option<ParamValue>,
    ) -> Result<Self, ExprError> {
        Self::compile_with(text, site_seed, param, &|_| None)
    }

    /// [`Expr::compile`], with named sub-expressions: a name that `vars` knows is replaced by
    /// its compiled tree (before parameters are looked up), so every use of it has the same
    /// value for the same iteration.
    pub fn compile_with(
        text: &str,
        site_seed: u64,
        param: &dyn Fn(&str) -> Option<ParamValue>,
        vars: &dyn Fn(&str) -> Option<Expr>,
    ) -> Result<Self, ExprError> {
        let mut p = Parser {
            src: text,
            pos: 0,
            sites: site_seed.wrapping_mul(0x1000_0000_01b3),
            elements: 0,
            param,
            vars,
        };
        let root = p.expr()?;
        p.skip_ws();
        if p.pos != text.len() {
            return Err(p.error("unexpected text after the expression"));
        }
        Ok(Self {
            text: text.to_owned(),
            root,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        })
    }

    /// The value for iteration `i`.
    pub fn eval(&self, i: u64) -> Result<Value<'_>, EvalError> {
        eval(&self.root, Env::top(i))
    }
}

/// A workload parameter's value as expressions see it.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamValue {
    /// An integer (a duration parameter is its length in milliseconds).
    Int(i64),
    /// A float.
    Float(f64),
    /// A string.
    Str(String),
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
        Node::Memo { id, body, top } => remembered(*id, body, env, *top)?,
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

impl ZipfConsts {
    fn new(n: f64, s: f64) -> Self {
        let mut z = Self {
            n,
            s,
            h_integral_x1: 0.0,
            h_integral_n: 0.0,
            sc: 0.0,
        };
        z.h_integral_x1 = z.h_integral(1.5) - 1.0;
        z.h_integral_n = z.h_integral(n + 0.5);
        z.sc = 2.0 - z.h_integral_inverse(z.h_integral(2.5) - z.h(2.0));
        z
    }

    /// The density's unnormalised value x^-s.
    fn h(&self, x: f64) -> f64 {
        (-self.s * x.ln()).exp()
    }

    /// An antiderivative of `h`: (x^(1-s) - 1) / (1 - s), and ln x when s = 1.
    fn h_integral(&self, x: f64) -> f64 {
        let lx = x.ln();
        expm1_over_x((1.0 - self.s) * lx) * lx
    }

    fn h_integral_inverse(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.s)).max(-1.0);
        (log1p_over_x(t) * x).exp()
    }
}

/// (e^x - 1) / x, continuous at 0.
fn expm1_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x / 2.0 * (1.0 + x / 3.0)
    }
}

/// ln(1 + x) / x, continuous at 0.
fn log1p_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x / 3.0)
    }
}

/// Rejection-inversion sampling of Zipf(n, s) over 1..=n (Hörmann and Derflinger, 1996):
/// exact, O(1) expected draws, no table. `u(k)` is the k-th uniform draw.
fn zipf_sample(z: &ZipfConsts, u: impl Fn(u64) -> f64) -> i64 {
    for k in 0..64 {
        let v = z.h_integral_n + u(k) * (z.h_integral_x1 - z.h_integral_n);
        let x = z.h_integral_inverse(v);
        let kk = (x + 0.5).floor().clamp(1.0, z.n);
        if kk - x <= z.sc || v >= z.h_integral(kk + 0.5) - z.h(kk) {
            return kk as i64;
        }
    }
    // Acceptance is above 50 % per round: 64 rejections in a row do not happen in practice.
    1
}

struct Parser<'p> {
    src: &'p str,
    pos: usize,
    sites: u64,
    /// How many collection element expressions enclose the parse position (`j` needs one).
    elements: usize,
    param: &'p dyn Fn(&str) -> Option<ParamValue>,
    /// Named sub-expressions, inlined where named.
    vars: &'p dyn Fn(&str) -> Option<Expr>,
}

impl Parser<'_> {
    fn var(&self, name: &str) -> Option<Expr> {
        (self.vars)(name)
    }

    fn error(&self, message: impl Into<String>) -> ExprError {
        ExprError {
            source_text: self.src.to_owned(),
            at: self.pos,
            message: message.into(),
        }
    }

    fn skip_ws(&mut self) {
        while self.src[self.pos..].starts_with(char::is_whitespace) {
            self.pos += self.src[self.pos..]
                .chars()
                .next()
                .map_or(1, char::len_utf8);
        }
    }

    fn eat(&mut self, c: char) -> bool {
        self.skip_ws();
        if self.src[self.pos..].starts_with(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }

    fn expr(&mut self) -> Result<Node, ExprError> {
        let mut left = self.term()?;
        loop {
            let op = if self.eat('+') {
                BinOp::Add
            } else if self.eat('-') {
                BinOp::Sub
            } else {
                return Ok(left);
            };
            let right = self.term()?;
            left = Node::Bin(op, Box::new(left), Box::new(right));
        }
    }

    fn term(&mut self) -> Result<Node, ExprError> {
        let mut left = self.unary()?;
        loop {
            let op = if self.eat('*') {
                BinOp::Mul
            } else if self.eat('/') {
                BinOp::Div
            } else if self.eat('%') {
                BinOp::Rem
            } else {
                return Ok(left);
            };
            let right = self.unary()?;
            left = Node::Bin(op, Box::new(left), Box::new(right));
        }
    }

    fn unary(&mut self) -> Result<Node, ExprError> {
        if self.eat('-') {
            return Ok(match self.unary()? {
                Node::Int(v) => Node::Int(v.wrapping_neg()),
                Node::Float(v) => Node::Float(-v),
                other => Node::Neg(Box::new(other)),
            });
        }
        self.atom()
    }

    fn atom(&mut self) -> Result<Node, ExprError> {
        self.skip_ws();
        let rest = &self.src[self.pos..];
        let Some(c) = rest.chars().next() else {
            return Err(self.error("expected a value"));
        };
        if c == '(' {
            self.pos += 1;
            let e = self.expr()?;
            if !self.eat(')') {
                return Err(self.error("expected `)`"));
            }
            return Ok(e);
        }
        if c == '\'' {
            let body = &rest[1..];
            let Some(end) = body.find('\'') else {
                return Err(self.error("unterminated string"));
            };
            self.pos += end + 2;
            return Ok(Node::Str(body[..end].to_owned()));
        }
        if c.is_ascii_digit() {
            let len = rest
                .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '.' || ch == '_'))
                .unwrap_or(rest.len());
            let lit = rest[..len].replace('_', "");
            let node = if lit.contains(['.', 'e', 'E']) && !lit.starts_with("0x") {
                Node::Float(lit.parse().map_err(|_| self.error("bad number"))?)
            } else {
                Node::Int(parse_int(&lit).ok_or_else(|| self.error("bad integer"))?)
            };
            self.pos += len;
            return Ok(node);
        }
        if c.is_ascii_alphabetic() || c == '_' {
            let len = rest
                .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
                .unwrap_or(rest.len());
            let name = &rest[..len];
            let at = self.pos;
            self.pos += len;
            if self.eat('(') {
                return self.call(name, at);
            }
            return match name {
                "i" => Ok(Node::Iter),
                "j" if self.elements > 0 => Ok(Node::Pos),
                "j" => {
                    self.pos = at;
                    Err(self.error(
                        "`j` (an element's position) is only defined inside the element \
                         expression of list, set, map or vector",
                    ))
                }
                "true" => Ok(Node::Bool(true)),
                "false" => Ok(Node::Bool(false)),
                "null" => Ok(Node::Null),
                _ => match (self.param)(name) {
                    _ if self.var(name).is_some() => Ok(self.var(name).map_or(Node::Null, |e| {
                        if samples(&e.root) {
                            Node::Memo {
                                id: e.id,
                                top: iteration_only(&e.root),
                                body: Box::new(e.root),
                            }
                        } else {
                            e.root
                        }
                    })),
                    Some(ParamValue::Int(v)) => Ok(Node::Int(v)),
                    Some(ParamValue::Float(v)) => Ok(Node::Float(v)),
                    Some(ParamValue::Str(s)) => Ok(Node::Str(s)),
                    None => {
                        self.pos = at;
                        Err(self.error(format!("unknown name `{name}` (not `i`, not a parameter)")))
                    }
                },
            };
        }
        Err(self.error(format!("unexpected `{c}`")))
    }

    fn call(&mut self, name: &str, at: usize) -> Result<Node, ExprError> {
        let mut args = Vec::new();
        // A collection's arguments after its count are element expressions: `j` is defined.
        let collection = matches!(name, "list" | "set" | "map" | "vector");
        if !self.eat(')') {
            loop {
                let element = collection && !args.is_empty();
                self.elements += usize::from(element);
                let arg = self.expr();
                self.elements -= usize::from(element);
                args.push(arg?);
                if self.eat(')') {
                    break;
                }
                if !self.eat(',') {
                    return Err(self.error("expected `,` or `)`"));
                }
            }
        }
        let (func, min, max) = match name {
            "hash" => (Func::Hash, 1, 2),
            "uniform" => (Func::Uniform, 2, 2),
            "normal" => (Func::Normal, 2, 2),
            "zipf" => (Func::Zipf, 2, 2),
            "uuid" => (Func::Uuid, 0, 2),
            "text" => (Func::Text, 1, 3),
            "blob" => (Func::Blob, 1, 3),
            "dist" => (Func::Dist, 1, 2),
            "int" => (Func::Int, 1, 1),
            "float" => (Func::Float, 1, 1),
            "list" => (Func::List, 2, 2),
            "set" => (Func::Set, 2, 2),
            "vector" => (Func::Vector, 2, 2),
            "map" => (Func::Map, 3, 3),
            "tuple" | "udt" => (Func::Tuple, 1, usize::from(u16::MAX)),
            _ => {
                self.pos = at;
                return Err(self.error(format!("unknown function `{name}`")));
            }
        };
        if args.len() < min || args.len() > max {
            self.pos = at;
            return Err(self.error(format!(
                "`{name}` takes {min}{} arguments, got {}",
                if max > min {
                    format!(" to {max}")
                } else {
                    String::new()
                },
                args.len()
            )));
        }
        let zipf = if func == Func::Zipf {
            let (Node::Int(n), s) = (&args[0], &args[1]) else {
                self.pos = at;
                return Err(self.error("zipf's n must be a constant integer"));
            };
            let s = match s {
                Node::Float(s) => *s,
                Node::Int(s) => *s as f64,
                _ => {
                    self.pos = at;
                    return Err(self.error("zipf's exponent must be a constant"));
                }
            };
            if *n < 1 || s <= 0.0 {
                self.pos = at;
                return Err(self.error("zipf needs n >= 1 and an exponent > 0"));
            }
            Some(ZipfConsts::new(*n as f64, s))
        } else {
            None
        };
        let dist = if func == Func::Dist {
            let Node::Str(spec) = &args[0] else {
                self.pos = at;
                return Err(self.error("dist's distribution must be a constant string"));
            };
            match Distribution::parse(spec) {
                Ok(d) => Some(Box::new(d)),
                Err(e) => {
                    self.pos = at;
                    return Err(self.error(e.to_string()));
                }
            }
        } else {
            None
        };
        self.sites = mix(self.sites.wrapping_add(1));
        Ok(Node::Call {
            func,
            args,
            site: self.sites,
            zipf,
            dist,
        })
    }
}

fn parse_int(s: &str) -> Option<i64> {
    if let Some(hex) = s.strip_prefix("0x") {
        return i64::from_str_radix(hex, 16).ok();
    }
    // Suffixes for readable counts: 10k, 5M, 1G.
    let (digits, mult) = match s.as_bytes().last() {
        Some(b'k' | b'K') => (&s[..s.len() - 1], 1_000),
        Some(b'M') => (&s[..s.len() - 1], 1_000_000),
        Some(b'G') => (&s[..s.len() - 1], 1_000_000_000),
        _ => (s, 1),
    };
    digits.parse::<i64>().ok()?.checked_mul(mult)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compile(text: &str) -> Expr {
        Expr::compile(text, 1, &|name| match name {
            "rows" => Some(ParamValue::Int(1000)),
            "ratio" => Some(ParamValue::Float(0.5)),
            _ => None,
        })
        .unwrap()
    }

    #[test]
    fn arithmetic_and_parameters() {
        assert_eq!(compile("i * 2 + 1").eval(20).unwrap(), Value::Int(41));
        assert_eq!(compile("-(i - 3) % rows").eval(5).unwrap(), Value::Int(998));
        assert_eq!(compile("i * ratio").eval(3).unwrap(), Value::Float(1.5));
        assert_eq!(compile("10k + 0x10").eval(0).unwrap(), Value::Int(10_016));
        assert_eq!(compile("'abc'").eval(0).unwrap(), Value::Str("abc"));
        assert!(compile("i / 0").eval(1).is_err());
    }

    #[test]
    fn errors_point_at_the_problem() {
        let p = |_: &str| None;
        let e = Expr::compile("i + nope", 0, &p).unwrap_err();
        assert_eq!(e.at, 4);
        assert!(e.message.contains("nope"));
        assert!(Expr::compile("hash(", 0, &p).is_err());
        assert!(Expr::compile("uniform(1)", 0, &p).is_err());
        assert!(Expr::compile("zipf(i, 1.1)", 0, &p).is_err());
        assert!(Expr::compile("1 2", 0, &p).is_err());
    }

    #[test]
    fn generators_are_pure_and_sites_are_independent() {
        let e = compile("uniform(0, 1000000)");
        assert_eq!(e.eval(7).unwrap(), e.eval(7).unwrap());
        assert_ne!(e.eval(7).unwrap(), e.eval(8).unwrap());
        let two = compile("uniform(0, 1000000) - uniform(0, 1000000)");
        let differs = (0..100).any(|i| two.eval(i).unwrap() != Value::Int(0));
        assert!(differs, "two call sites draw different numbers");
        let h = compile("hash(i) % rows");
        for i in 0..1000 {
            let Value::Int(v) = h.eval(i).unwrap() else {
                panic!()
            };
            assert!((0..1000).contains(&v));
        }
    }

    #[test]
    fn distributions_have_their_moments() {
        let n = 200_000u64;
        let u = compile("uniform(10, 20)");
        let mean = (0..n)
            .map(|i| match u.eval(i).unwrap() {
                Value::Int(v) => {
                    assert!((10..20).contains(&v));
                    v as f64
                }
                _ => panic!(),
            })
            .sum::<f64>()
            / n as f64;
        assert!((mean - 14.5).abs() < 0.05, "{mean}");
        let g = compile("normal(5.0, 2.0)");
        let xs: Vec<f64> = (0..n)
            .map(|i| match g.eval(i).unwrap() {
                Value::Float(v) => v,
                _ => panic!(),
            })
            .collect();
        let m = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / n as f64;
        assert!((m - 5.0).abs() < 0.03, "{m}");
        assert!((var.sqrt() - 2.0).abs() < 0.03, "{}", var.sqrt());
    }

    #[test]
    fn zipf_matches_its_probabilities() {
        // Zipf(10, 1.2): P(k) = k^-1.2 / H where H = sum over 1..=10.
        let z = compile("zipf(10, 1.2)");
        let n = 200_000u64;
        let mut counts = [0u64; 11];
        for i in 0..n {
            match z.eval(i).unwrap() {
                Value::Int(k) => counts[k as usize] += 1,
                _ => panic!(),
            }
        }
        assert_eq!(counts[0], 0);
        let h: f64 = (1..=10).map(|k| (k as f64).powf(-1.2)).sum();
        for (k, &c) in counts.iter().enumerate().skip(1) {
            let expected = (k as f64).powf(-1.2) / h;
            let got = c as f64 / n as f64;
            assert!(
                (got - expected).abs() < 0.005,
                "P({k}) = {got}, expected {expected}"
            );
        }
    }

    #[test]
    fn dist_samples_a_cassandra_stress_distribution() {
        let p = |_: &str| None;
        // Without a source: random per iteration and call site, within the bounds.
        let e = compile("dist('uniform(1..10)') - dist('uniform(1..10)')");
        assert!((0..100).any(|i| e.eval(i).unwrap() != Value::Int(0)));
        let e = compile("dist('GAUSSIAN(1..100,3)')");
        for i in 0..1000 {
            let Value::Int(v) = e.eval(i).unwrap() else {
                panic!()
            };
            assert!((1..=100).contains(&v));
        }
        // SEQ without a source counts with the iteration.
        let e = compile("dist('seq(1..3)')");
        let v: Vec<Value<'_>> = (0..4).map(|i| e.eval(i).unwrap()).collect();
        assert_eq!(
            v,
            [Value::Int(1), Value::Int(2), Value::Int(3), Value::Int(1)]
        );
        // With a source: the same value at every call site, in every expression.
        let a = Expr::compile("dist('exp(1..1k)', i * 7)", 1, &p).unwrap();
        let b = Expr::compile("dist('exp(1..1k)', i * 7) + 0", 99, &p).unwrap();
        assert!((0..100).all(|i| a.eval(i).unwrap() == b.eval(i).unwrap()));
        // The spec may be a string parameter.
        let e = Expr::compile("dist(pop, i)", 0, &|n| {
            (n == "pop").then(|| ParamValue::Str("FIXED(7)".into()))
        })
        .unwrap();
        assert_eq!(e.eval(3).unwrap(), Value::Int(7));
        for bad in ["dist(i)", "dist('zipf(1..3)')", "dist('uniform(3..1)', i)"] {
            assert!(Expr::compile(bad, 0, &p).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_explicit_seed_makes_text_blob_and_uuid_the_same_everywhere() {
        let p = |_: &str| None;
        for text in ["text(8, i, 3)", "blob(8, i, 3)", "uuid(i, 3)"] {
            let a = Expr::compile(text, 1, &p).unwrap();
            let b = Expr::compile(text, 2, &p).unwrap();
            assert_eq!(a.eval(5).unwrap(), b.eval(5).unwrap(), "{text}");
            assert_ne!(a.eval(5).unwrap(), a.eval(6).unwrap(), "{text}");
        }
        let a = Expr::compile("text(8, i, 3)", 1, &p).unwrap();
        let b = Expr::compile("text(8, i, 4)", 1, &p).unwrap();
        assert_ne!(a.eval(5).unwrap(), b.eval(5).unwrap());
        // Without a seed, the call site still tells two places apart (as before).
        let a = Expr::compile("text(8, i)", 1, &p).unwrap();
        let b = Expr::compile("text(8, i)", 2, &p).unwrap();
        assert_ne!(a.eval(5).unwrap(), b.eval(5).unwrap());
    }

    #[test]
    fn remembered_vars_give_the_values_they_would_give_afresh() {
        let p = |_: &str| None;
        // `g` samples with an explicit x: remembered once per iteration, in every scope.
        let g = Expr::compile("dist('GAUSSIAN(1..1000000)', hash(i, 7))", 1, &p).unwrap();
        // `u` draws from its scope's key: remembered per scope (each element its own).
        let u = Expr::compile("dist('UNIFORM(1..1000000)')", 2, &p).unwrap();
        let vars = |n: &str| match n {
            "g" => Some(g.clone()),
            "u" => Some(u.clone()),
            _ => None,
        };
        let twice = Expr::compile_with("g + g", 0, &p, &vars).unwrap();
        let inline = Expr::compile("dist('GAUSSIAN(1..1000000)', hash(i, 7)) * 2", 0, &p).unwrap();
        let list = Expr::compile_with("list(4, g * 1000000 + u)", 3, &p, &vars).unwrap();
        for i in 0..2_000u64 {
            // Other iterations in between replace what the table holds: never a stale value.
            for k in [i, i + 1, i / 2, i] {
                assert_eq!(twice.eval(k).unwrap(), inline.eval(k).unwrap(), "at {k}");
            }
            let elements = |i: u64| -> Vec<Value<'_>> {
                let v = list.eval(i).unwrap();
                let c = composite(v);
                (0..4).map(|j| c.element(j, 0).unwrap()).collect()
            };
            let first = elements(i);
            let Value::Int(g_i) = g.eval(i).unwrap() else {
                panic!()
            };
            let us: Vec<i64> = first
                .iter()
                .map(|v| match v {
                    Value::Int(x) => x - g_i * 1_000_000,
                    other => panic!("{other:?}"),
                })
                .collect();
            // g is the iteration's inside every element; u differs from element to element.
            assert!(us.iter().all(|x| (1..=1_000_000).contains(x)), "{us:?}");
            assert!(us.windows(2).any(|w| w[0] != w[1]), "{us:?}");
            assert_eq!(elements(i + 1).len(), 4);
            assert_eq!(elements(i), first);
        }
    }

    #[test]
    fn vars_are_inlined_with_their_call_sites() {
        let p = |_: &str| None;
        let r = Expr::compile("uniform(0, 1000000)", 5, &p).unwrap();
        let vars = |n: &str| (n == "r").then(|| r.clone());
        let e = Expr::compile_with("r - r", 0, &p, &vars).unwrap();
        assert!((0..100).all(|i| e.eval(i).unwrap() == Value::Int(0)));
        let e = Expr::compile_with("r", 7, &p, &vars).unwrap();
        assert!((0..100).all(|i| e.eval(i).unwrap() == r.eval(i).unwrap()));
        assert!(Expr::compile_with("q", 0, &p, &vars).is_err());
    }

    #[test]
    fn uuids_text_and_blobs() {
        let u = compile("uuid()");
        let Value::Uuid(v) = u.eval(1).unwrap() else {
            panic!()
        };
        assert_eq!((v >> 76) & 0xf, 4, "version 4");
        assert_eq!((v >> 62) & 0x3, 2, "RFC 4122 variant");
        assert_ne!(u.eval(1).unwrap(), u.eval(2).unwrap());
        assert_eq!(
            compile("uuid(5)").eval(1).unwrap(),
            compile("uuid(5)").eval(2).unwrap(),
            "an explicit source fixes the value"
        );
        assert!(matches!(
            compile("text(12)").eval(3).unwrap(),
            Value::Text { len: 12, .. }
        ));
        assert!(matches!(
            compile("blob(1k)").eval(3).unwrap(),
            Value::Blob { len: 1000, .. }
        ));
        assert!(compile("text(-1)").eval(0).is_err());
    }

    fn composite(v: Value<'_>) -> Composite<'_> {
        match v {
            Value::Composite(c) => c,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn collections_evaluate_their_elements_on_demand() {
        let e = compile("list(3, i * 10 + j)");
        let c = composite(e.eval(4).unwrap());
        assert_eq!((c.kind(), c.len()), (CompositeKind::List, 3));
        assert_eq!(c.element(2, 0).unwrap(), Value::Int(42));
        assert_eq!(c.constant_len(), Some(3));
        let m = compile("map(uniform(1, 5), j, 'v')");
        let c = composite(m.eval(0).unwrap());
        assert_eq!(c.constant_len(), None);
        assert_eq!(c.element(1, 0).unwrap(), Value::Int(1));
        assert_eq!(c.element(1, 1).unwrap(), Value::Str("v"));
        let t = compile("tuple(i, 'a', null)");
        let c = composite(t.eval(8).unwrap());
        assert_eq!((c.kind(), c.len()), (CompositeKind::Tuple, 3));
        assert_eq!(c.element(0, 0).unwrap(), Value::Int(8));
        assert_eq!(c.element(2, 0).unwrap(), Value::Null);
        assert!(c.element(3, 0).is_err());
        assert!(
            compile("list(0 - 1, j)").eval(0).is_err(),
            "a negative count"
        );
        assert!(std::mem::size_of::<Value<'_>>() <= 64, "Value stays small");
    }

    #[test]
    fn j_is_the_innermost_position_and_elements_draw_apart() {
        // The tuple has no j of its own: it sees the list's.
        let e = compile("list(2, tuple(j, list(3, j)))");
        let outer = composite(e.eval(0).unwrap());
        let t = composite(outer.element(1, 0).unwrap());
        assert_eq!(t.element(0, 0).unwrap(), Value::Int(1));
        let inner = composite(t.element(1, 0).unwrap());
        assert_eq!(inner.element(2, 0).unwrap(), Value::Int(2));
        // The count sees the enclosing scope: here the outer position.
        let e = compile("list(3, list(j, 0))");
        let outer = composite(e.eval(0).unwrap());
        assert_eq!(composite(outer.element(2, 0).unwrap()).len(), 2);
        // Random elements differ by position, and by iteration, but not by evaluation.
        let r = compile("list(4, uniform(0, 1000000000))");
        let a = composite(r.eval(1).unwrap());
        let b = composite(r.eval(2).unwrap());
        assert_ne!(a.element(0, 0).unwrap(), a.element(1, 0).unwrap());
        assert_ne!(a.element(0, 0).unwrap(), b.element(0, 0).unwrap());
        assert_eq!(
            a.element(3, 0).unwrap(),
            composite(r.eval(1).unwrap()).element(3, 0).unwrap()
        );
        // `j` outside an element is an error at compile time, pointing at it.
        let p = |_: &str| None;
        let err = Expr::compile("i + j", 0, &p).unwrap_err();
        assert_eq!(err.at, 4);
        assert!(err.message.contains("element"), "{}", err.message);
        assert!(
            Expr::compile("list(j, 1)", 0, &p).is_err(),
            "the count is outside"
        );
        assert!(Expr::compile("tuple(j)", 0, &p).is_err());
        assert!(Expr::compile("map(1, 2)", 0, &p).is_err());
        assert!(Expr::compile("tuple()", 0, &p).is_err());
    }
}
