//! The driver-counts figure: what doppio's driver counted beside the requests (retries,
//! re-prepares, tablet misroutes, requests by node; scylla counts none of them); taken from
//! the driver's counters, summed in a merge, and its SUMMARY and OVERHEAD rows.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::backend::DriverCounters;
use crate::report::cell::{Row, Value};
use crate::report::pool::Part;

/// A backend's driver counts (`BackendReport`'s fields, flattened: the names are the
/// JSON's).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DriverCountFigures {
    /// Retries the driver's retry policy made over the measured segments (doppio's
    /// counters; `null` for scylla, whose count needs its `metrics` feature, which would add
    /// work to its request path).
    #[serde(default)]
    pub retries: Option<u64>,
    /// `retries` per second of measured time.
    #[serde(default)]
    pub retries_per_s: Option<f64>,
    /// Statements doppio prepared again over the measured segments because a node had
    /// forgotten them (UNPREPARED, e.g. after a restart); `null` for scylla, which does not
    /// count them.
    #[serde(default)]
    pub reprepares: Option<u64>,
    /// Requests over the measured segments that reached a ScyllaDB node or shard holding no
    /// replica of their tablet (the node served each and answered with the tablet's
    /// routing, which doppio learned): 0 once every doppio shard knows the tablets it uses,
    /// and on Cassandra; `null` for scylla, which does not count them.
    #[serde(default)]
    pub tablet_misroutes: Option<u64>,
    /// Requests sent to each node over the measured segments, retries included (doppio's
    /// per-node counters; `null` for scylla).
    #[serde(default)]
    pub requests_by_node: Option<BTreeMap<String, u64>>,
}

impl DriverCountFigures {
    /// The figure of the driver's `counters` over the measured segments (`None`: the driver
    /// has none) and their `elapsed` seconds.
    pub(crate) fn of(counters: Option<&DriverCounters>, elapsed: f64) -> Self {
        DriverCountFigures {
            retries: counters.map(|c| c.retries),
            retries_per_s: counters
                .filter(|_| elapsed > 0.0)
                .map(|c| c.retries as f64 / elapsed),
            reprepares: counters.map(|c| c.reprepares),
            tablet_misroutes: counters.map(|c| c.tablet_misroutes),
            requests_by_node: counters.map(|c| c.nodes.clone()),
        }
    }

    /// The machines' counts: machines retry on their own, so counts and rates add up
    /// (`null` when one has none); requests by node summed over the machines that counted
    /// them.
    pub(crate) fn pooled(parts: &[Part<'_, Self>]) -> Self {
        let requests_by_node = parts
            .iter()
            .filter_map(|(_, _, b)| b.requests_by_node.as_ref())
            .fold(None, |acc: Option<BTreeMap<String, u64>>, m| {
                let mut acc = acc.unwrap_or_default();
                for (node, n) in m {
                    *acc.entry(node.clone()).or_default() += n;
                }
                Some(acc)
            });
        DriverCountFigures {
            retries: parts.iter().map(|(_, _, b)| b.retries).sum::<Option<u64>>(),
            retries_per_s: parts
                .iter()
                .map(|(_, _, b)| b.retries_per_s)
                .sum::<Option<f64>>(),
            reprepares: parts
                .iter()
                .map(|(_, _, b)| b.reprepares)
                .sum::<Option<u64>>(),
            tablet_misroutes: parts
                .iter()
                .map(|(_, _, b)| b.tablet_misroutes)
                .sum::<Option<u64>>(),
            requests_by_node,
        }
    }

    /// Its SUMMARY rows, each shown when some column counted any: retries per second,
    /// re-prepares, tablet misroutes.
    pub(crate) fn rows<'a>() -> Vec<Row<'a, Self>> {
        vec![
            Row::new("retries", "/s", 1, |b: &Self| {
                Value::or_missing(b.retries_per_s)
            })
            .shown_if(|b| b.retries.is_some_and(|r| r > 0)),
            Row::new("re-prepares", "", 0, |b: &Self| {
                b.reprepares.map_or(Value::Missing, Value::Count)
            })
            .shown_if(|b| b.reprepares.is_some_and(|r| r > 0)),
            Row::new("tablet misroutes", "", 0, |b: &Self| {
                b.tablet_misroutes.map_or(Value::Missing, Value::Count)
            })
            .shown_if(|b| b.tablet_misroutes.is_some_and(|r| r > 0)),
        ]
    }

    /// Its OVERHEAD rows of where the requests went: each of `nodes`' share of them.
    pub(crate) fn node_rows<'a>(nodes: Vec<String>) -> Vec<Row<'a, Self>> {
        nodes
            .into_iter()
            .map(|node| {
                Row::new(format!("  sent to {node}"), "", 1, move |b: &Self| {
                    let Some(m) = &b.requests_by_node else {
                        return Value::Missing;
                    };
                    let total: u64 = m.values().sum();
                    let n = m.get(&node).copied().unwrap_or(0);
                    if total == 0 {
                        Value::Missing
                    } else {
                        Value::Percent(100.0 * n as f64 / total as f64)
                    }
                })
            })
            .collect()
    }
}
