//! The circles of a graph: its strongly connected components of more than one node (Tarjan).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// The arrows of a graph, each with where it is drawn (`file:line`, one per path).
pub(crate) type Edges = BTreeMap<(String, String), Vec<String>>;

/// Every circle of the graph, each as its sorted nodes; nodes are visited in sorted order and
/// so are each node's successors, so the order is stable.
pub(crate) fn circles(nodes: &BTreeSet<String>, edges: &Edges) -> Vec<Vec<String>> {
    let mut succ: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (a, b) in edges.keys() {
        succ.entry(a.as_str()).or_default().insert(b.as_str());
    }
    let mut tarjan = Tarjan {
        succ,
        ..Tarjan::default()
    };
    for node in nodes {
        if !tarjan.index.contains_key(node.as_str()) {
            tarjan.visit(node);
        }
    }
    tarjan.found
}

#[derive(Default)]
struct Tarjan<'a> {
    succ: BTreeMap<&'a str, BTreeSet<&'a str>>,
    index: HashMap<&'a str, usize>,
    low: HashMap<&'a str, usize>,
    stack: Vec<&'a str>,
    on_stack: HashSet<&'a str>,
    found: Vec<Vec<String>>,
}

impl<'a> Tarjan<'a> {
    fn visit(&mut self, v: &'a str) {
        let n = self.index.len();
        self.index.insert(v, n);
        self.low.insert(v, n);
        self.stack.push(v);
        self.on_stack.insert(v);
        let next: Vec<&'a str> = self.succ.get(v).into_iter().flatten().copied().collect();
        for w in next {
            if !self.index.contains_key(w) {
                self.visit(w);
                let low = self.low[v].min(self.low[w]);
                self.low.insert(v, low);
            } else if self.on_stack.contains(w) {
                let low = self.low[v].min(self.index[w]);
                self.low.insert(v, low);
            }
        }
        if self.low[v] == self.index[v] {
            let mut component = Vec::new();
            while let Some(w) = self.stack.pop() {
                self.on_stack.remove(w);
                component.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                self.found.push(component);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edges(pairs: &[(&str, &str)]) -> Edges {
        pairs
            .iter()
            .map(|(a, b)| ((a.to_string(), b.to_string()), vec![]))
            .collect()
    }

    #[test]
    fn a_cycle_is_one_circle_and_a_chain_none() {
        let nodes = ["a", "b", "c", "d"].map(String::from).into_iter().collect();
        let found = circles(
            &nodes,
            &edges(&[("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")]),
        );
        assert_eq!(found, vec![vec!["a", "b", "c"]]);
        assert!(circles(&nodes, &edges(&[("a", "b"), ("b", "c")])).is_empty());
    }
}
