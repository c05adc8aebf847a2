//! The rules applied: one shard's matcher checks what a request looks like to the rules
//! against their conditions, counting matches and drawing its random numbers.

use std::time::Duration;

use doppio_proto::consistency::Consistency;
use doppio_proto::frame::Opcode;

use crate::rules::model::{Rule, Rules};

/// What a request looks like to the rules.
#[derive(Debug, Clone, Copy)]
pub struct Probe<'a> {
    /// Its opcode.
    pub opcode: Opcode,
    /// Its statement text, if any.
    pub statement: Option<&'a str>,
    /// Its connection's number.
    pub connection: u64,
    /// The node it reached (0 for a single stub).
    pub node: u8,
    /// Time since the stub started.
    pub elapsed: Duration,
    /// The serial consistency a QUERY, EXECUTE or BATCH carries.
    pub serial_consistency: Option<Consistency>,
}

/// One shard's rule state: per-rule match counts and a random generator.
#[derive(Debug)]
pub struct Matcher {
    rules: std::sync::Arc<Rules>,
    seen: Vec<u64>,
    rng: u64,
}

impl Matcher {
    /// A matcher for shard `shard`.
    pub fn new(rules: std::sync::Arc<Rules>, shard: usize) -> Self {
        let n = rules.rules.len();
        let rng = (rules.seed ^ 0x9e37_79b9_7f4a_7c15).wrapping_add(shard as u64 * 0x2545_f491) | 1;
        Self {
            rules,
            seen: vec![0; n],
            rng,
        }
    }

    /// True if there are no rules (the hot path skips matching).
    pub fn is_empty(&self) -> bool {
        self.rules.rules.is_empty()
    }

    /// A uniform number in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        (self.rng >> 11) as f64 / (1u64 << 53) as f64
    }

    /// The first rule that applies to `probe`, by index.
    pub fn check(&mut self, probe: &Probe<'_>) -> Option<usize> {
        for i in 0..self.rules.rules.len() {
            let c = &self.rules.rules[i].when;
            if c.opcode.is_some_and(|o| o != probe.opcode)
                || c.connection.is_some_and(|n| n != probe.connection)
                || c.node.is_some_and(|n| n != probe.node)
                || c.after.is_some_and(|a| probe.elapsed < a)
                || c.until.is_some_and(|u| probe.elapsed > u)
                || c.serial_consistency
                    .is_some_and(|s| s != probe.serial_consistency)
            {
                continue;
            }
            if let Some(s) = &c.statement {
                if !probe.statement.is_some_and(|t| t.contains(s.as_str())) {
                    continue;
                }
            }
            self.seen[i] += 1;
            if c.every.is_some_and(|n| self.seen[i] % n != 0) {
                continue;
            }
            if let Some(p) = c.probability {
                if self.uniform() >= p {
                    continue;
                }
            }
            return Some(i);
        }
        None
    }

    /// Rule `i`.
    pub fn rule(&self, i: usize) -> &Rule {
        &self.rules.rules[i]
    }
}
