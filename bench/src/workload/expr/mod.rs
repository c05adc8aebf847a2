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
//! Named sub-expressions (a workload's `[vars]`, `Expr::compile_with`) are written once and
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
//! iteration (`Composite`): elements are evaluated when they are encoded, never stored.
//!
//! Files (private; what they make public is re-exported here): `parse`, the text compiled
//! into a tree (and the parameters it reads, `ParamValue`); `tree`, the compiled tree and
//! [`Expr`], which holds one; `eval`, the tree evaluated for an iteration; `value`, the
//! values it makes ([`Value`], `Composite`); `scope`, the scope an evaluation runs in;
//! `memo`, the per-thread memory of named sub-expressions' values; `random`, the hash random
//! functions draw from (`mix`) and the Zipf sampler; `error`, what can go wrong compiling
//! or evaluating (`ExprError`, `EvalError`); `tests`, the language's tests.

mod error;
mod eval;
mod memo;
mod parse;
mod random;
mod scope;
mod tree;
mod value;

#[cfg(test)]
mod tests;

pub(crate) use self::error::{EvalError, ExprError};
pub(crate) use self::parse::ParamValue;
pub(crate) use self::random::mix;
pub use self::tree::Expr;
pub use self::value::Value;
pub(crate) use self::value::{Composite, CompositeKind};
