//! The command's run: which crates and views its arguments ask for, and what it prints of
//! each graph (arrows, circles, upward arrows, or Graphviz dot) and of the verdict.

use std::io::Write;
use std::path::Path;

use super::circles::{circles, Edges};
use super::error::Error;
use super::files::file_graph;
use super::modules::module_graph;
use super::tree::CrateTree;

/// Which views are printed and enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Both views, both enforced.
    Both,
    /// The module view only.
    Modules,
    /// The file view only.
    Files,
}

/// Runs the command with `args` (after `import-graph`) from the workspace root (the current
/// directory): the report on `out`, circles, upward arrows and verdicts of failure on `err`.
/// Whether every enforced check passed.
pub(crate) fn run(
    args: &[String],
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<bool, Error> {
    let dot = args.iter().any(|a| a == "--dot");
    let mode = if args.iter().any(|a| a == "--files") {
        Mode::Files
    } else if args.iter().any(|a| a == "--modules") {
        Mode::Modules
    } else {
        Mode::Both
    };
    let mut crates: Vec<String> = args
        .iter()
        .filter(|a| !matches!(a.as_str(), "--dot" | "--files" | "--modules"))
        .map(|a| a.trim_end_matches('/').to_owned())
        .collect();
    if crates.is_empty() {
        crates = workspace_members(Path::new("Cargo.toml"))?;
    }

    let mut modules_failed = false;
    let mut files_failed = false;
    for krate in &crates {
        if !Path::new(krate).join("src").is_dir() {
            continue;
        }
        let tree = CrateTree::read(krate)?;
        if mode != Mode::Files {
            modules_failed |= !check_modules(krate, &tree, dot, out, err)?;
        }
        if mode != Mode::Modules {
            files_failed |= !check_files(krate, &tree, dot, out, err)?;
        }
    }
    if modules_failed {
        writeln!(
            err,
            "import-graph check FAILED: a crate's modules import each other in a circle (a \
             module and its submodules are one node); break it by moving the shared piece to a \
             module both can import"
        )?;
    }
    if files_failed {
        writeln!(
            err,
            "import-graph check FAILED: a crate's files import each other in a circle, or a \
             file imports an item defined in a module above it; move the shared item down into \
             a file both can import"
        )?;
    }
    if modules_failed || files_failed {
        return Ok(false);
    }
    if !dot {
        match mode {
            Mode::Files => writeln!(
                out,
                "import-graph check passed: no circle and no upward arrow among the files of {}",
                crates.join(", ")
            )?,
            Mode::Modules => writeln!(
                out,
                "import-graph check passed: no circle among any crate's modules"
            )?,
            Mode::Both => writeln!(
                out,
                "import-graph check passed: no circle among any crate's modules, and no circle \
                 and no upward arrow among any crate's files"
            )?,
        }
    }
    Ok(true)
}

/// The `[workspace] members` of a manifest.
fn workspace_members(manifest: &Path) -> Result<Vec<String>, Error> {
    let text = std::fs::read_to_string(manifest).map_err(|source| Error::Read {
        path: manifest.to_owned(),
        source,
    })?;
    let table: toml::Table = toml::from_str(&text).map_err(|source| Error::Manifest {
        path: manifest.to_owned(),
        source,
    })?;
    let members = table
        .get("workspace")
        .and_then(|w| w.get("members"))
        .and_then(|m| m.as_array())
        .ok_or_else(|| Error::NoMembers {
            path: manifest.to_owned(),
        })?;
    members
        .iter()
        .map(|m| m.as_str().map(str::to_owned))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| Error::NoMembers {
            path: manifest.to_owned(),
        })
}

/// Prints a crate's module view (or its dot); whether it has no circle (always, for dot).
fn check_modules(
    krate: &str,
    tree: &CrateTree,
    dot: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<bool, Error> {
    let graph = module_graph(tree);
    let found = circles(&graph.nodes, &graph.edges);
    if dot {
        print_dot(out, krate, &graph.nodes, &graph.edges)?;
        return Ok(true);
    }
    let verdict = if found.is_empty() {
        "no circle".to_owned()
    } else {
        format!("{} circle(s)", found.len())
    };
    writeln!(
        out,
        "{krate}: {} modules, {} arrows, {verdict}",
        graph.nodes.len(),
        graph.edges.len()
    )?;
    print_arrows(out, &graph.edges)?;
    for component in &found {
        writeln!(err, "  CIRCLE among {}:", component.join(", "))?;
        print_circle_arrows(err, component, &graph.edges)?;
    }
    Ok(found.is_empty())
}

/// Prints a crate's file view (or its dot); whether it has no circle and no upward arrow
/// (always, for dot).
fn check_files(
    krate: &str,
    tree: &CrateTree,
    dot: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<bool, Error> {
    let graph = file_graph(tree);
    let found = circles(&graph.nodes, &graph.edges);
    if dot {
        print_dot(out, &format!("{krate}_files"), &graph.nodes, &graph.edges)?;
        return Ok(true);
    }
    writeln!(
        out,
        "{krate} (files): {} files, {} arrows, {} circle(s), {} upward arrow(s)",
        graph.nodes.len(),
        graph.edges.len(),
        found.len(),
        graph.upward.len()
    )?;
    print_arrows(out, &graph.edges)?;
    for component in &found {
        writeln!(
            err,
            "  CIRCLE among {} files of {krate}: {}",
            component.len(),
            component.join(", ")
        )?;
        print_circle_arrows(err, component, &graph.edges)?;
    }
    for ((a, b), where_) in &graph.upward {
        writeln!(
            err,
            "  UPWARD {a} -> {b} (imports an item defined in a module above it): {}",
            where_.join(", ")
        )?;
    }
    Ok(found.is_empty() && graph.upward.is_empty())
}

/// One line per arrow: its ends, how many paths draw it, and the first of them.
fn print_arrows(out: &mut dyn Write, edges: &Edges) -> Result<(), Error> {
    for ((a, b), where_) in edges {
        let first = where_.first().map(String::as_str).unwrap_or_default();
        let more = if where_.len() > 1 { " ..." } else { "" };
        writeln!(out, "  {a} -> {b}  ({}: {first}{more})", where_.len())?;
    }
    Ok(())
}

/// The arrows inside a circle, each with every place that draws it.
fn print_circle_arrows(
    err: &mut dyn Write,
    component: &[String],
    edges: &Edges,
) -> Result<(), Error> {
    for ((a, b), where_) in edges {
        if component.contains(a) && component.contains(b) {
            writeln!(err, "    {a} -> {b}: {}", where_.join(", "))?;
        }
    }
    Ok(())
}

/// A graph in Graphviz dot, each arrow labelled with how many paths draw it.
fn print_dot(
    out: &mut dyn Write,
    name: &str,
    nodes: &std::collections::BTreeSet<String>,
    edges: &Edges,
) -> Result<(), Error> {
    writeln!(out, "digraph {} {{", name.replace(['/', '-'], "_"))?;
    for node in nodes {
        writeln!(out, "  \"{node}\";")?;
    }
    for ((a, b), where_) in edges {
        writeln!(out, "  \"{a}\" -> \"{b}\" [label=\"{}\"];", where_.len())?;
    }
    writeln!(out, "}}")?;
    Ok(())
}
