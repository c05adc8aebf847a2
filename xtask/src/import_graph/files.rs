//! The file view: every file is a node, and a file that names an item draws an arrow to the
//! file where the item is defined (imports and re-exports followed there); an arrow to a file
//! of a module above it is an upward arrow.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::circles::Edges;
use super::source::Place;
use super::tree::{CrateTree, ModPath, MAIN};

/// A crate's file graph.
#[derive(Debug, Default)]
pub(crate) struct FileGraph {
    /// The files.
    pub(crate) nodes: BTreeSet<String>,
    /// The arrows between them, each with the `file:line` of every line that draws it.
    pub(crate) edges: Edges,
    /// The arrows from a file to the file of a module above it.
    pub(crate) upward: Edges,
}

/// What a name brought in by a `use` stands for: a path from the crate root, or `None` for
/// something from outside the crate.
type Imports = HashMap<String, Option<ModPath>>;

/// How deep a chain of imports is followed before it is taken for a loop.
const MAX_HOPS: usize = 20;

/// The file graph of a crate.
pub(crate) fn file_graph(tree: &CrateTree) -> FileGraph {
    // What each module imports, and the arrows its `use` items draw: (phase 0, place, target).
    let mut imports: HashMap<&ModPath, Imports> = HashMap::new();
    let mut found: HashMap<&ModPath, Vec<(u8, Place, ModPath)>> = HashMap::new();
    for (path, module) in &tree.modules {
        let mut names = Imports::new();
        let mut arrows = Vec::new();
        for item in &module.scope.uses {
            for leaf in &item.leaves {
                let segments = &leaf.segments;
                let Some(last) = segments.last() else {
                    continue;
                };
                let target = if item.external {
                    None
                } else {
                    absolute(path, segments, &module.children)
                };
                if last == "*" {
                    if let Some(mut target) = target {
                        target.pop();
                        arrows.push((0, item.place, target));
                    }
                    continue;
                }
                let name = leaf.alias.clone().unwrap_or_else(|| last.clone());
                names.insert(name, target.clone());
                if let Some(target) = target {
                    arrows.push((0, item.place, target));
                }
            }
        }
        imports.insert(path, names);
        found.insert(path, arrows);
    }
    let resolver = Resolver {
        tree,
        imports: &imports,
    };

    // A use that imports a module (`use super::ops;`) draws no arrow by itself: each path
    // through it in the code (`ops::Hold`) does, to the file of the item it names.
    for (path, module) in &tree.modules {
        let mut aliases: BTreeMap<&str, ModPath> = BTreeMap::new();
        for (name, target) in &imports[path] {
            if let Some(target) = target {
                if let Some(named) = resolver.resolve(target, true, 0) {
                    if tree.modules.contains_key(&named) {
                        aliases.insert(name, named);
                    }
                }
            }
        }
        let arrows = found.entry(path).or_default();
        arrows.retain(|(_, _, target)| {
            let imports_module = resolver
                .resolve(target, true, 0)
                .is_some_and(|named| aliases.values().any(|m| *m == named));
            !(imports_module
                && target
                    .last()
                    .is_some_and(|l| aliases.contains_key(l.as_str())))
        });
        for code in &module.scope.paths {
            let head = code.segments[0].as_str();
            let target = if module.children.contains(head) {
                absolute(path, &code.segments, &module.children)
            } else if let Some(named) = aliases.get(head) {
                let mut target = named.clone();
                target.extend(code.segments[1..].iter().cloned());
                Some(target)
            } else if matches!(head, "crate" | "self" | "super") {
                absolute(path, &code.segments, &module.children)
            } else {
                None
            };
            if let Some(target) = target {
                arrows.push((1, code.place, target));
            }
        }
    }

    // Each file's arrows: its `use` items' first, then its code's, each in source order.
    let mut per_file: Vec<Vec<(u8, Place, ModPath)>> = vec![Vec::new(); tree.files.len()];
    for (path, arrows) in found {
        per_file[tree.modules[path].file].extend(arrows);
    }
    let mut graph = FileGraph {
        nodes: tree.files.iter().map(|f| f.name.clone()).collect(),
        ..FileGraph::default()
    };
    for (index, mut arrows) in per_file.into_iter().enumerate() {
        arrows.sort_by_key(|a| (a.0, a.1));
        let me = &tree.files[index];
        for (_, place, target) in arrows {
            let Some(held) = resolver.resolve(&target, false, 0) else {
                continue;
            };
            let Some(module) = tree.modules.get(&held) else {
                continue;
            };
            if module.file == index {
                continue;
            }
            let to = &tree.files[module.file];
            let at = format!("{}:{}", me.name, place.line);
            let where_ = graph
                .edges
                .entry((me.name.clone(), to.name.clone()))
                .or_default();
            if !where_.contains(&at) {
                where_.push(at);
            }
        }
    }
    let by_name: HashMap<&str, &ModPath> = tree
        .files
        .iter()
        .map(|f| (f.name.as_str(), &f.module))
        .collect();
    for ((a, b), where_) in &graph.edges {
        let (from, to) = (by_name[a.as_str()], by_name[b.as_str()]);
        if to.len() < from.len() && from.starts_with(to) {
            graph.upward.insert((a.clone(), b.clone()), where_.clone());
        }
    }
    graph
}

/// The path `segments`, written in module `module`, from the crate root; `None` if it starts
/// outside the crate.
fn absolute(module: &ModPath, segments: &[String], children: &BTreeSet<String>) -> Option<ModPath> {
    let head = segments.first()?.as_str();
    let in_main = module.first().is_some_and(|m| m == MAIN);
    match head {
        "crate" => {
            let mut path = if in_main {
                vec![MAIN.to_owned()]
            } else {
                Vec::new()
            };
            path.extend(segments[1..].iter().cloned());
            Some(path)
        }
        "self" | "super" => {
            let mut base = module.clone();
            let mut i = usize::from(head == "self");
            while i < segments.len() && segments[i] == "super" {
                base.pop();
                i += 1;
            }
            base.extend(segments[i..].iter().cloned());
            Some(base)
        }
        _ if children.contains(head) => {
            let mut path = module.clone();
            path.extend(segments.iter().cloned());
            Some(path)
        }
        _ => None,
    }
}

/// Follows paths through modules and imports.
struct Resolver<'a> {
    tree: &'a CrateTree,
    imports: &'a HashMap<&'a ModPath, Imports>,
}

impl Resolver<'_> {
    /// The module holding the item `path` names: its segments are followed module by module,
    /// and a name a module only imports (or re-exports) is followed to where it comes from.
    /// With `whole_module`: the module `path` names, or `None` if it names an item. `None`
    /// too for an item from outside the crate.
    fn resolve(&self, path: &[String], whole_module: bool, hops: usize) -> Option<ModPath> {
        let mut current: ModPath = Vec::new();
        let mut path = path;
        if path.first().is_some_and(|p| p == MAIN) {
            current.push(MAIN.to_owned());
            path = &path[1..];
        }
        for (i, segment) in path.iter().enumerate() {
            if matches!(segment.as_str(), "self" | "super" | "crate") {
                return None;
            }
            current.push(segment.clone());
            if self.tree.modules.contains_key(&current) {
                continue;
            }
            current.pop();
            let imported = self
                .imports
                .get(&current)
                .and_then(|names| names.get(segment));
            let Some(target) = imported else {
                // Defined here (or a macro's, or unknown: counted here).
                return if whole_module { None } else { Some(current) };
            };
            let Some(target) = target else { return None };
            if hops > MAX_HOPS {
                return None;
            }
            let mut next = target.clone();
            next.extend(path[i + 1..].iter().cloned());
            return self.resolve(&next, whole_module, hops + 1);
        }
        Some(current)
    }
}
