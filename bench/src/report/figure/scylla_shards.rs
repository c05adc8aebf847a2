//! The ScyllaDB-shards figure: the requests doppio sent to each ScyllaDB shard of each node
//! (its per-connection counters grouped by the shard each connection landed on); taken
//! from the driver's counters, summed in a merge, and its OVERHEAD rows.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::report::cell::{Row, Value};
use crate::report::pool::Part;

/// A backend's requests by ScyllaDB shard (`BackendReport`'s field, flattened: the name is
/// the JSON's).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScyllaShardFigures {
    /// Requests sent to each ScyllaDB shard of each node over the measured segments
    /// (`"ADDR:PORT": [count of shard 0, shard 1, ...]`), from doppio's per-connection
    /// counters grouped by the shard each connection landed on; `null` for scylla and for
    /// nodes without ScyllaDB shards (Cassandra).
    #[serde(default)]
    pub requests_by_scylla_shard: Option<BTreeMap<String, Vec<u64>>>,
}

impl ScyllaShardFigures {
    /// The figure of the driver's counts by node and shard (`None`: the driver has none;
    /// empty: no node has ScyllaDB shards).
    pub(crate) fn of(by_shard: Option<&BTreeMap<String, Vec<u64>>>) -> Self {
        ScyllaShardFigures {
            requests_by_scylla_shard: by_shard.filter(|m| !m.is_empty()).cloned(),
        }
    }

    /// The machines' counts summed shard by shard, over the machines that counted them.
    pub(crate) fn pooled(parts: &[Part<'_, Self>]) -> Self {
        let requests_by_scylla_shard = parts
            .iter()
            .filter_map(|(_, _, b)| b.requests_by_scylla_shard.as_ref())
            .fold(None, |acc: Option<BTreeMap<String, Vec<u64>>>, m| {
                let mut acc = acc.unwrap_or_default();
                for (node, counts) in m {
                    let total = acc.entry(node.clone()).or_default();
                    if total.len() < counts.len() {
                        total.resize(counts.len(), 0);
                    }
                    for (t, n) in total.iter_mut().zip(counts) {
                        *t += n;
                    }
                }
                Some(acc)
            });
        ScyllaShardFigures {
            requests_by_scylla_shard,
        }
    }

    /// Its OVERHEAD rows: each of `shards` (node, shard)'s share of its node's requests.
    pub(crate) fn rows<'a>(shards: Vec<(String, usize)>) -> Vec<Row<'a, Self>> {
        shards
            .into_iter()
            .map(|(node, shard)| {
                let label = format!("  ScyllaDB shard {shard} of {node}");
                Row::new(label, "", 1, move |b: &Self| {
                    let Some(counts) = b
                        .requests_by_scylla_shard
                        .as_ref()
                        .and_then(|m| m.get(&node))
                    else {
                        return Value::Missing;
                    };
                    let total: u64 = counts.iter().sum();
                    match counts.get(shard) {
                        Some(&n) if total > 0 => Value::Percent(100.0 * n as f64 / total as f64),
                        _ => Value::Missing,
                    }
                })
            })
            .collect()
    }
}
