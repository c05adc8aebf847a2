//! The module view: a top-level module and all its submodules are one node, and every
//! `crate::`, `self::` or `super::` path is an arrow from the node of its file to the node it
//! names (through the root's `pub use` re-exports to the module an item comes from).

use std::collections::{BTreeSet, HashMap};

use super::circles::Edges;
use super::source::{HeadRef, Place};
use super::tree::{CrateTree, ModPath};

/// A crate's module graph.
#[derive(Debug, Default)]
pub(crate) struct ModuleGraph {
    /// The top-level modules.
    pub(crate) nodes: BTreeSet<String>,
    /// The arrows between them, each with the `file:line` of every path that draws it.
    pub(crate) edges: Edges,
}

/// The module graph of a crate.
pub(crate) fn module_graph(tree: &CrateTree) -> ModuleGraph {
    let nodes: BTreeSet<String> = tree
        .files
        .iter()
        .filter_map(|f| f.placed.first().cloned())
        .collect();
    let exported = reexports(tree);
    // Each file's heads, with the module (as placed under src/) of the scope they are in.
    let mut per_file: Vec<Vec<(Place, ModPath, &HeadRef)>> = vec![Vec::new(); tree.files.len()];
    for (path, module) in &tree.modules {
        let file = &tree.files[module.file];
        let mut me = file.placed.clone();
        me.extend(path.iter().skip(file.module.len()).cloned());
        for head in &module.scope.heads {
            per_file[module.file].push((head.place, me.clone(), head));
        }
    }
    let mut order: Vec<usize> = (0..tree.files.len()).collect();
    order.sort_by(|&a, &b| tree.files[a].name.cmp(&tree.files[b].name));
    let mut graph = ModuleGraph {
        nodes,
        edges: Edges::new(),
    };
    for index in order {
        let file = &tree.files[index];
        let Some(mine) = file.placed.first() else {
            continue;
        }; // the crate root: the map
        let heads = &mut per_file[index];
        heads.sort_by_key(|h| h.0);
        for (place, me, head) in heads.iter() {
            let base: &[String] = match head.head[0].as_str() {
                "crate" => &[],
                "self" => me,
                _ => &me[..me.len().saturating_sub(head.head.len())],
            };
            let target = if let Some(first) = base.first() {
                first
            } else if graph.nodes.contains(&head.first) {
                &head.first
            } else if let Some(module) = exported
                .get(&head.first)
                .filter(|m| graph.nodes.contains(*m))
            {
                module
            } else {
                continue; // an item of the root itself, or a macro's
            };
            if target != mine {
                let key = (mine.clone(), target.clone());
                graph
                    .edges
                    .entry(key)
                    .or_default()
                    .push(format!("{}:{}", file.name, place.line));
            }
        }
    }
    graph
}

/// Item name -> the top-level module it comes from, for each name the crate root re-exports
/// with a `pub use module::..` (the first such item of a root wins; the binary's root after
/// the library's).
fn reexports(tree: &CrateTree) -> HashMap<String, String> {
    let mut exported = HashMap::new();
    for (index, file) in tree.files.iter().enumerate() {
        if !file.placed.is_empty() {
            continue;
        }
        let mut items: Vec<_> = tree
            .modules
            .values()
            .filter(|m| m.file == index)
            .flat_map(|m| m.scope.uses.iter())
            .collect();
        items.sort_by_key(|u| u.place);
        let mut names = HashMap::new();
        for (module, brought) in items.iter().filter_map(|u| u.reexport.as_ref()) {
            for name in brought {
                names.entry(name.clone()).or_insert_with(|| module.clone());
            }
        }
        exported.extend(names);
    }
    exported
}
