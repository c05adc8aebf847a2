//! The values generators make ([`Value`]), composites ([`Composite`]) being a compiled
//! node and a scope whose elements are evaluated when encoded ([`Composite::element`], in
//! the evaluator).

use std::fmt;

use super::scope::Env;
use super::tree::{Func, Node};

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
pub(crate) enum CompositeKind {
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
    pub(crate) fn name(self) -> &'static str {
        match self {
            CompositeKind::List => "list",
            CompositeKind::Set => "set",
            CompositeKind::Map => "map",
            CompositeKind::Vector => "vector",
            CompositeKind::Tuple => "tuple",
        }
    }
}

/// A composite value of one iteration: its compiled generator and its scope, with the
/// element count already evaluated. Copy, and no bigger than a few words: the elements are
/// evaluated on demand by [`Composite::element`], so nothing is allocated.
#[derive(Clone, Copy, PartialEq)]
pub struct Composite<'a> {
    pub(super) node: &'a Node,
    pub(super) env: Env,
    pub(super) len: u32,
    pub(super) kind: CompositeKind,
}

impl fmt::Debug for Composite<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({} elements)", self.kind.name(), self.len)
    }
}

impl<'a> Composite<'a> {
    /// The generator that made it.
    pub(crate) fn kind(&self) -> CompositeKind {
        self.kind
    }

    /// Elements (map entries, tuple fields).
    pub(crate) fn len(&self) -> u32 {
        self.len
    }

    /// The count given as a constant in the expression (`vector(3, ...)`), if it was.
    pub(crate) fn constant_len(&self) -> Option<i64> {
        match self.node {
            Node::Call { func, args, .. } if *func != Func::Tuple => match args.first() {
                Some(Node::Int(n)) => Some(*n),
                _ => None,
            },
            Node::Call { args, .. } => Some(args.len() as i64),
            _ => None,
        }
    }
}
