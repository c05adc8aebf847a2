//! The compiler: an expression's text parsed into a tree ([`Expr::compile`]), with
//! parameters and named sub-expressions resolved and constant arguments checked.

use std::sync::atomic::{AtomicU64, Ordering};

use super::error::ExprError;
use super::random::{mix, ZipfConsts};
use super::tree::{iteration_only, samples, BinOp, Expr, Func, Node};
use crate::workload::dist::Distribution;

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

/// Ids of compiled expressions, for [`Node::Memo`] (taken at compile time, never per request).
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

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
    pub(crate) fn compile_with(
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
