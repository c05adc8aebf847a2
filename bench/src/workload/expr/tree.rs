//! The compiled tree: its nodes (operators, functions, named sub-expressions), [`Expr`]
//! holding one with its text, and what compiling asks of a tree (whether it samples, whether
//! it reads only the iteration).

use std::fmt;

use super::random::ZipfConsts;
use crate::workload::dist::Distribution;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Func {
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

/// A compiled expression tree.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Node {
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
    /// ([`remembered`](super::memo::remembered)), so the other uses of the var in one
    /// iteration's arguments do not sample again.
    Memo {
        id: u64,
        body: Box<Node>,
        /// The body reads nothing of the scope but the iteration (no `j`, no random draw
        /// from the scope's key), so one value serves every scope of the iteration: inside
        /// each element of a collection too.
        top: bool,
    },
}

/// Whether `node` reads nothing of its scope but the iteration: no `j`, and no function that
/// draws from the scope's key (`uniform`, `normal`, `zipf`, and `uuid`, `text`, `blob` and
/// `dist` without their `x`); no collection (its elements are made in a scope of their own).
pub(super) fn iteration_only(node: &Node) -> bool {
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
pub(super) fn samples(node: &Node) -> bool {
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
    pub(super) text: String,
    pub(super) root: Node,
    /// Its id as a named sub-expression ([`Node::Memo`]).
    pub(super) id: u64,
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}
