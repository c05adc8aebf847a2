//! The `import-graph` command: each workspace crate's import graph at module and file
//! granularity, printed, and a check that it has no circle and no upward arrow.
//!
//! Read from the sources with syn (no compiler). Comments, doc comments and strings are not
//! code; macro bodies are read token by token, their `$crate` paths left out; test-only items
//! (`#[cfg(test)]`, `#[cfg(all(test, ..))]`) and the files only a test-only `mod` declares are
//! left out.
//!
//! Module view (`--modules`, checked on every crate): every `crate::a::...`, `super::...` and
//! `self::...` path in code (`use crate::{a::X, b::Y}` groups followed into) is an arrow from
//! the module of the file to the module it names. A top-level module of the crate and all its
//! submodules are one node (`session/mod.rs`, `session/run.rs` and `session/stats.rs` are all
//! `session`), so `control.rs` <-> `session/mod.rs` is a circle, and so is `pool.rs` ->
//! `session::stats` while `session` imports `pool`. Arrows inside a node are not drawn. The
//! crate root (lib.rs, main.rs, with the inline modules in them) is the crate's map, not a
//! node; a path to an item it re-exports (`crate::Error` for `pub use error::Error`) counts as
//! an arrow to the module the item comes from.
//!
//! File view (`--files`): every file is a node, the crate root too. An arrow goes from file A
//! to file B when A names an item that lives in B: a `crate::`/`self::`/`super::` path, a path
//! through a submodule A declares (`executor::Executor` in a `mod.rs` with `mod executor;`),
//! each leaf of a `use` tree (a leaf importing a module, `use super::ops;`, is no arrow itself:
//! each path through it, `ops::Hold`, is). A path is followed module by module to the file of
//! the module that holds the named item; a name that module only imports or re-exports (`use`,
//! `pub use`, private or not) is followed on to the file where the item is defined. An inline
//! module (`mod m { .. }`) is a module of its own, with its own imports, held in its file. So:
//! - a parent declaring `mod child;` is not an arrow; its `pub use child::X` (a re-export) is
//!   an arrow parent -> child, downwards, as is any use the parent makes of a child's items;
//! - a child naming `super::X` where the parent only re-exports X from a sibling is an arrow
//!   to that sibling, not to the parent: a parent that is only a map (declarations and
//!   re-exports) is never imported;
//! - a child naming an item *defined* in its parent (or in any file above it: the crate root,
//!   a `mod.rs`, a `foo.rs` declaring `foo/`) is "a file importing a module above it": the
//!   parent already reaches down to the child (it declares it, and usually uses or re-exports
//!   it), so the arrow back up is a circle the tree hides. The file check refuses such an
//!   arrow as it refuses circles: move the item down into a file of its own that both the
//!   parent and the child import.
//!
//! The file check passes for a crate when its file graph has no circle and no upward arrow.
//! Limits: glob imports (`use x::*`) are an arrow to the module globbed, but the names they
//! bring in are not followed; what a macro generates is not seen (what a macro body writes
//! is: its paths, and its `use ..;` and `mod x;` as in `cfg_if!`, but not modules declared
//! by a macro defined in one file and invoked in another); a `use` path starting from a name
//! another `use` brought in is taken for another crate's; every `cfg` other than a test-only
//! one is read as on (two same-named modules under opposite `cfg`s are one module).
//!
//! Modules: `report` (arguments, printing, verdict), `tree` (a crate's files and modules),
//! `source` (what one file says, read with syn), `modules` (the module view), `files` (the file
//! view), `circles` (strongly connected components), `error` (why it could not run), `tests`
//! (planted crates).

mod circles;
mod error;
mod files;
mod modules;
mod report;
mod source;
mod tree;

#[cfg(test)]
mod tests;

pub(crate) use report::run;

/// The command's usage.
pub(crate) const USAGE: &str = "\
Usage: xtask import-graph [--modules | --files] [--dot] [CRATE_DIR...]
  (no CRATE_DIR: every member of the workspace; a CRATE_DIR is read from the workspace root)
  (neither mode: the module check and the file check on every crate, enforced. This is
   what scripts/check-seams.sh runs.)
  --modules  the module view only
  --files    the file view only, enforced on every crate given
  --dot      print each crate's graph in Graphviz dot (arrows labelled with how many paths)
Prints the arrows of each crate and every circle (and upward arrow) with the file:line of
each arrow in it; exits 1 if any enforced check fails, 0 otherwise.";
