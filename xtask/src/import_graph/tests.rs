//! The checks on small crates planted in temporary directories: circles, upward arrows,
//! re-exports, test-only code, `use` groups and macro paths.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::run;

/// A crate written into a fresh temporary directory, removed when dropped.
struct Planted {
    dir: PathBuf,
}

impl Planted {
    /// A crate with these files (paths under its directory, `src/lib.rs` and so on).
    fn new(files: &[(&str, &str)]) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "xtask-import-graph-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        for (path, text) in files {
            let path = dir.join(path);
            std::fs::create_dir_all(path.parent().expect("a file has a directory"))
                .expect("create the crate's directories");
            std::fs::write(&path, text).expect("write a file of the crate");
        }
        Planted { dir }
    }

    /// The command's verdict, output and error output on this crate with `flags`, its
    /// directory written `c`.
    fn check(&self, flags: &[&str]) -> (bool, String, String) {
        let dir = self.dir.display().to_string();
        let mut args: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
        args.push(dir.clone());
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let passed = run(&args, &mut out, &mut err).expect("the crate can be read");
        let text = |bytes: Vec<u8>| String::from_utf8(bytes).unwrap().replace(&dir, "c");
        (passed, text(out), text(err))
    }
}

impl Drop for Planted {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn a_planted_module_circle_fails_the_module_check() {
    let krate = Planted::new(&[
        ("src/lib.rs", "mod a;\nmod b;\n"),
        ("src/a.rs", "use crate::b::B;\npub struct A(B);\n"),
        ("src/b/mod.rs", "mod inner;\npub struct B;\n"),
        ("src/b/inner.rs", "pub fn f(_: &crate::a::A) {}\n"),
    ]);
    let (passed, out, err) = krate.check(&["--modules"]);
    assert!(!passed);
    assert!(
        out.contains("c: 2 modules, 2 arrows, 1 circle(s)\n"),
        "{out}"
    );
    assert!(out.contains("  a -> b  (1: c/src/a.rs:1)\n"), "{out}");
    assert!(err.contains("  CIRCLE among a, b:\n"), "{err}");
    assert!(err.contains("    b -> a: c/src/b/inner.rs:1\n"), "{err}");
    assert!(
        err.contains("import-graph check FAILED: a crate's modules"),
        "{err}"
    );
    // The files are no circle: only the module view sees `b` as one node.
    let (passed, _, err) = krate.check(&["--files"]);
    assert!(passed, "{err}");
}

#[test]
fn a_planted_file_circle_fails_the_file_check_only() {
    let krate = Planted::new(&[
        ("src/lib.rs", "mod m;\n"),
        ("src/m/mod.rs", "mod x;\nmod y;\n"),
        (
            "src/m/x.rs",
            "use super::y::Y;\npub struct X;\npub fn f(_: Y) {}\n",
        ),
        ("src/m/y.rs", "pub struct Y;\npub fn g(_: super::x::X) {}\n"),
    ]);
    let (passed, _, err) = krate.check(&["--modules"]);
    assert!(passed, "{err}");
    let (passed, out, err) = krate.check(&[]);
    assert!(!passed);
    assert!(
        out.contains("c (files): 4 files, 2 arrows, 1 circle(s), 0 upward arrow(s)\n"),
        "{out}"
    );
    assert!(
        err.contains("  CIRCLE among 2 files of c: c/src/m/x.rs, c/src/m/y.rs\n"),
        "{err}"
    );
    assert!(
        err.contains("    c/src/m/x.rs -> c/src/m/y.rs: c/src/m/x.rs:1\n"),
        "{err}"
    );
    assert!(
        err.contains("    c/src/m/y.rs -> c/src/m/x.rs: c/src/m/y.rs:2\n"),
        "{err}"
    );
    assert!(
        err.contains("import-graph check FAILED: a crate's files"),
        "{err}"
    );
}

#[test]
fn a_child_naming_an_item_of_its_parent_is_an_upward_arrow() {
    let krate = Planted::new(&[
        ("src/lib.rs", "mod m;\n"),
        (
            "src/m/mod.rs",
            "mod child;\npub struct P;\npub use child::C;\n",
        ),
        (
            "src/m/child.rs",
            "pub struct C;\nimpl C {\n    fn p(&self) -> super::P { super::P }\n}\n",
        ),
    ]);
    let (passed, out, err) = krate.check(&["--files"]);
    assert!(!passed);
    assert!(out.contains("1 circle(s), 1 upward arrow(s)\n"), "{out}");
    assert!(
        err.contains(
            "  UPWARD c/src/m/child.rs -> c/src/m/mod.rs (imports an item defined in a module \
             above it): c/src/m/child.rs:3\n"
        ),
        "{err}"
    );
}

#[test]
fn a_re_export_is_followed_to_its_defining_file() {
    let krate = Planted::new(&[
        ("src/lib.rs", "mod m;\npub use m::X;\n"),
        ("src/m/mod.rs", "mod a;\nmod b;\npub use a::X;\n"),
        ("src/m/a.rs", "pub struct X;\n"),
        (
            "src/m/b.rs",
            "use super::X;\npub fn f(_: X, _: crate::X) {}\n",
        ),
    ]);
    let (passed, out, err) = krate.check(&["--files"]);
    assert!(passed, "{err}");
    assert!(
        out.contains("  c/src/m/b.rs -> c/src/m/a.rs  (2: c/src/m/b.rs:1 ...)\n"),
        "{out}"
    );
    assert!(
        out.contains("  c/src/m/mod.rs -> c/src/m/a.rs  (1: c/src/m/mod.rs:3)\n"),
        "{out}"
    );
    assert!(
        out.contains("  c/src/lib.rs -> c/src/m/a.rs  (1: c/src/lib.rs:2)\n"),
        "{out}"
    );
    assert!(!out.contains("c/src/m/b.rs -> c/src/m/mod.rs"), "{out}");
    assert!(!out.contains("-> c/src/lib.rs"), "{out}");
}

#[test]
fn test_only_imports_and_files_are_left_out() {
    let krate = Planted::new(&[
        ("src/lib.rs", "mod a;\nmod b;\n"),
        (
            "src/a.rs",
            "pub struct A;\n#[cfg(test)]\nuse crate::b::B;\n#[cfg(all(test, feature = \"x\"))]\n\
             fn t() -> crate::b::B { crate::b::B }\n#[cfg(test)]\nmod tests;\n",
        ),
        ("src/a/tests.rs", "use crate::b::B;\n"),
        ("src/b.rs", "use crate::a::A;\npub struct B(A);\n"),
    ]);
    let (passed, out, err) = krate.check(&[]);
    assert!(passed, "{err}");
    assert!(out.contains("c: 2 modules, 1 arrows, no circle\n"), "{out}");
    assert!(out.contains("c (files): 3 files, 1 arrows"), "{out}");
    assert!(!out.contains("tests.rs"), "{out}");
}

#[test]
fn each_leaf_of_a_use_group_is_followed() {
    let krate = Planted::new(&[
        ("src/lib.rs", "mod a;\nmod user;\n"),
        ("src/a/mod.rs", "pub mod b;\npub mod c;\n"),
        ("src/a/b.rs", "pub struct X;\n"),
        ("src/a/c.rs", "pub struct Y;\n"),
        (
            "src/user.rs",
            "use crate::a::{b::X, c::*};\npub fn f(_: X, _: Y) {}\n",
        ),
    ]);
    let (passed, out, err) = krate.check(&[]);
    assert!(passed, "{err}");
    assert!(out.contains("  user -> a  (1: c/src/user.rs:1)\n"), "{out}");
    assert!(
        out.contains("  c/src/user.rs -> c/src/a/b.rs  (1: c/src/user.rs:1)\n"),
        "{out}"
    );
    assert!(
        out.contains("  c/src/user.rs -> c/src/a/c.rs  (1: c/src/user.rs:1)\n"),
        "{out}"
    );
    // A group right after the head: one module-view path per member.
    let krate = Planted::new(&[
        ("src/lib.rs", "mod a;\nmod b;\nmod user;\n"),
        ("src/a.rs", "pub struct X;\n"),
        ("src/b.rs", "pub struct Y;\n"),
        ("src/user.rs", "use crate::{a::X, b::Y, self as me};\n"),
    ]);
    let (_, out, _) = krate.check(&["--modules"]);
    assert!(out.contains("c: 3 modules, 2 arrows, no circle\n"), "{out}");
    assert!(out.contains("  user -> a  (1: c/src/user.rs:1)\n"), "{out}");
    assert!(out.contains("  user -> b  (1: c/src/user.rs:1)\n"), "{out}");
}

#[test]
fn dollar_crate_paths_in_macros_are_left_out_and_written_ones_count() {
    let krate = Planted::new(&[
        ("src/lib.rs", "mod a;\nmod b;\n"),
        (
            "src/a.rs",
            "pub struct A;\n#[macro_export]\nmacro_rules! make_b {\n    () => {\n        \
             $crate::b::B\n    };\n}\n",
        ),
        (
            "src/b.rs",
            "pub struct B;\npub fn f() -> Vec<crate::a::A> {\n    vec![crate::a::A]\n}\n",
        ),
    ]);
    let (passed, out, err) = krate.check(&[]);
    assert!(passed, "{err}");
    assert!(out.contains("  b -> a  (2: c/src/b.rs:2 ...)\n"), "{out}");
    assert!(!out.contains("a -> b"), "{out}");
    assert!(
        out.contains("  c/src/b.rs -> c/src/a.rs  (2: c/src/b.rs:2 ...)\n"),
        "{out}"
    );
}

#[test]
fn an_inline_module_is_a_module_of_its_file() {
    let krate = Planted::new(&[
        ("src/lib.rs", "mod m;\n"),
        ("src/m/mod.rs", "mod model;\nmod read;\n"),
        (
            "src/m/model.rs",
            "pub mod defaults {\n    pub use super::super::read::R;\n    pub const N: u8 = 1;\n}\n",
        ),
        (
            "src/m/read.rs",
            "use super::model::defaults;\npub struct R;\nconst N: u8 = defaults::N;\n",
        ),
    ]);
    let (passed, out, err) = krate.check(&["--files"]);
    // The module `defaults` draws no arrow at its `use`, only where a path goes through it;
    // its `pub use` of `read::R` is an arrow model.rs -> read.rs: a circle.
    assert!(!passed);
    assert!(
        out.contains("  c/src/m/read.rs -> c/src/m/model.rs  (1: c/src/m/read.rs:3)\n"),
        "{out}"
    );
    assert!(
        out.contains("  c/src/m/model.rs -> c/src/m/read.rs  (1: c/src/m/model.rs:2)\n"),
        "{out}"
    );
    assert!(err.contains("CIRCLE among 2 files"), "{err}");
}

#[test]
fn comments_strings_and_dot_output() {
    let krate = Planted::new(&[
        ("src/lib.rs", "mod a;\nmod b;\n"),
        (
            "src/a.rs",
            "// crate::b::B\n/// [`crate::b::B`]\npub const S: &str = \"crate::b::B\";\n",
        ),
        ("src/b.rs", "pub struct B(pub(crate) crate::a::Unknown);\n"),
    ]);
    let (passed, out, _) = krate.check(&["--dot"]);
    assert!(passed);
    let name = krate.dir.display().to_string().replace(['/', '-'], "_");
    let expected = format!(
        "digraph {name} {{\n  \"a\";\n  \"b\";\n  \"b\" -> \"a\" [label=\"1\"];\n}}\n\
         digraph {name}_files {{\n  \"c/src/a.rs\";\n  \"c/src/b.rs\";\n  \"c/src/lib.rs\";\n  \
         \"c/src/b.rs\" -> \"c/src/a.rs\" [label=\"1\"];\n}}\n"
    );
    assert_eq!(out, expected);
}

#[test]
fn mod_and_use_in_a_macro_body_are_read_and_a_cfg_twin_merged() {
    let krate = Planted::new(&[
        ("src/lib.rs", "mod imp;\nmod user;\n"),
        (
            "src/imp/mod.rs",
            "cfg_if::cfg_if! {\n    if #[cfg(unix)] {\n        mod unix;\n        \
             pub(crate) use self::unix::Sys;\n    } else {\n        #[cfg(test)]\n        \
             mod fake;\n    }\n}\n#[cfg(unix)]\nmod twin {\n    pub struct A;\n}\n\
             #[cfg(not(unix))]\nmod twin {\n    pub use super::unix::Sys as A;\n}\n",
        ),
        ("src/imp/unix.rs", "pub struct Sys;\n"),
        ("src/imp/fake.rs", "pub struct Sys;\n"),
        ("src/user.rs", "use crate::imp::Sys;\n"),
    ]);
    let (passed, out, err) = krate.check(&["--files"]);
    assert!(passed, "{err}");
    assert!(out.contains("c (files): 4 files, 2 arrows"), "{out}");
    assert!(
        out.contains("  c/src/user.rs -> c/src/imp/unix.rs  (1: c/src/user.rs:1)\n"),
        "{out}"
    );
    assert!(
        out.contains("  c/src/imp/mod.rs -> c/src/imp/unix.rs  (2: c/src/imp/mod.rs:4 ...)\n"),
        "{out}"
    );
    assert!(!out.contains("fake.rs"), "{out}");
}
