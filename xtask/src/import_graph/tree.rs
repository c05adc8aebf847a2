//! A crate's module tree: the files reachable from `src/lib.rs` and `src/main.rs` through
//! `mod` declarations that are not test-only, and the modules (file or inline) in them.

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::error::Error;
use super::source::{self, Scope};

/// A module's path from its crate root. The binary's root (`main.rs`) is `["<main>"]`: it is a
/// crate of its own and reaches the library only by the crate's name.
pub(crate) type ModPath = Vec<String>;

/// The first segment of every module path in the binary's tree.
pub(crate) const MAIN: &str = "<main>";

/// One source file of the crate.
#[derive(Debug)]
pub(crate) struct SourceFile {
    /// Its path as printed: the crate directory as given, then `src/..`.
    pub(crate) name: String,
    /// The path of the module it holds (its top-level scope).
    pub(crate) module: ModPath,
    /// Its module path read from where it lies under `src/` (`src/a/mod.rs` is `a`, `lib.rs`
    /// and `main.rs` are the root): the module view's naming.
    pub(crate) placed: ModPath,
}

/// One module of the crate.
#[derive(Debug)]
pub(crate) struct Module {
    /// The index of its file in [`CrateTree::files`].
    pub(crate) file: usize,
    /// Its items.
    pub(crate) scope: Scope,
    /// The modules it declares, file or inline (whether or not their file is there).
    pub(crate) children: BTreeSet<String>,
}

/// A crate's files and modules.
#[derive(Debug, Default)]
pub(crate) struct CrateTree {
    /// Every file, in the order the walk reached them.
    pub(crate) files: Vec<SourceFile>,
    /// Every module (an inline one shares its file with the module around it).
    pub(crate) modules: BTreeMap<ModPath, Module>,
}

impl CrateTree {
    /// Reads the crate in `crate_dir` (which has a `src/`).
    pub(crate) fn read(crate_dir: &str) -> Result<Self, Error> {
        let src = Path::new(crate_dir).join("src");
        let mut tree = CrateTree::default();
        for (root, key) in [("lib.rs", Vec::new()), ("main.rs", vec![MAIN.to_owned()])] {
            let path = src.join(root);
            if path.is_file() {
                tree.walk_file(&src, key, &path, true)?;
            }
        }
        Ok(tree)
    }

    /// Reads the file at `path` holding module `module`, and every file it declares.
    /// `owns_dir`: its submodules' files are beside it (a crate root, a `mod.rs`, a `#[path]`
    /// file), not in a directory named after it.
    fn walk_file(
        &mut self,
        src: &Path,
        module: ModPath,
        path: &Path,
        owns_dir: bool,
    ) -> Result<(), Error> {
        let code = std::fs::read_to_string(path).map_err(|source| Error::Read {
            path: path.to_owned(),
            source,
        })?;
        let scope = source::read_scope(&code).map_err(|err| Error::Parse {
            path: path.to_owned(),
            line: err.span().start().line,
            column: err.span().start().column + 1,
            message: err.to_string(),
        })?;
        let placed = placed_module(src, path);
        let file = self.files.len();
        self.files.push(SourceFile {
            name: path.display().to_string(),
            module: module.clone(),
            placed,
        });
        let here = path.parent().map(Path::to_owned).unwrap_or_default();
        let base = if owns_dir {
            here.clone()
        } else {
            path.with_extension("")
        };
        self.add_module(src, module, file, scope, &base, Some(&here))
    }

    /// Adds a module (held in file `file`, its submodules' files under `base`), its inline
    /// modules and the files it declares. `file_dir`: the directory of its file when it is the
    /// file's top-level module (where a `#[path]` is read from).
    fn add_module(
        &mut self,
        src: &Path,
        module: ModPath,
        file: usize,
        mut scope: Scope,
        base: &Path,
        file_dir: Option<&Path>,
    ) -> Result<(), Error> {
        let declared = std::mem::take(&mut scope.declared);
        let inline = std::mem::take(&mut scope.inline);
        let children = declared
            .iter()
            .map(|d| d.name.clone())
            .chain(inline.iter().map(|i| i.0.clone()));
        let children: BTreeSet<String> = children.collect();
        // The same module twice (`#[cfg(a)] mod imp { .. }` and `#[cfg(not(a))] mod imp { .. }`):
        // one module, with the items of both.
        match self.modules.entry(module.clone()) {
            Entry::Vacant(entry) => {
                entry.insert(Module {
                    file,
                    scope,
                    children,
                });
            }
            Entry::Occupied(mut entry) => {
                let known = entry.get_mut();
                known.scope.uses.extend(scope.uses);
                known.scope.paths.extend(scope.paths);
                known.scope.heads.extend(scope.heads);
                known.children.extend(children);
            }
        }
        for (name, inner) in inline {
            let mut path = module.clone();
            path.push(name.clone());
            self.add_module(src, path, file, inner, &base.join(&name), None)?;
        }
        for child in declared {
            let mut path = module.clone();
            path.push(child.name.clone());
            let candidates: Vec<(PathBuf, bool)> = match (&child.path, file_dir) {
                (Some(attr), Some(dir)) => vec![(dir.join(attr), true)],
                (Some(attr), None) => vec![(base.join(attr), true)],
                (None, _) => vec![
                    (base.join(format!("{}.rs", child.name)), false),
                    (base.join(&child.name).join("mod.rs"), true),
                ],
            };
            let found = candidates.into_iter().find(|c| c.0.is_file());
            // A file declared twice (under two `cfg`s) is read once.
            let fresh = |f: &(PathBuf, bool)| self.files.iter().all(|s| Path::new(&s.name) != f.0);
            if let Some((found, owns_dir)) = found.filter(fresh) {
                self.walk_file(src, path, &found, owns_dir)?;
            }
        }
        Ok(())
    }
}

/// `src/a/b.rs` is `a::b`, `src/a/mod.rs` is `a`, `src/lib.rs` and `src/main.rs` the root.
fn placed_module(src: &Path, path: &Path) -> ModPath {
    let rel = path.strip_prefix(src).unwrap_or(path).with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let is_root = parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main");
    if is_root || parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}
