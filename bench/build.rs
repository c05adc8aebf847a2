//! What the report's `environment` says of the build: the compiler's version, the git commit
//! the bench was built from (and whether the tree had uncommitted changes then), and the
//! versions of the driver crates in Cargo.lock. Each is handed to the crate as an
//! environment variable read by `src/probe/environment.rs`; what cannot be found is "unknown".

use std::path::Path;
use std::process::Command;

/// The driver crates whose versions a report names.
const CRATES: &[&str] = &[
    "scylla",
    "scylla-cql",
    "tokio",
    "glommio",
    "io-uring",
    "rustls",
];

fn output(program: &str, args: &[&str], dir: &Path) -> Option<String> {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let manifest = Path::new(&manifest);
    let root = manifest.parent().unwrap_or(manifest);

    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let rustc = output(&rustc, &["--version"], manifest).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=DOPPIO_BUILD_RUSTC={rustc}");

    // The commit, and the files that change when it does (HEAD, the branch's ref, packed
    // refs), so that the script runs again after a commit but not after every edit.
    let commit = output("git", &["rev-parse", "HEAD"], root);
    let dirty = output(
        "git",
        &["status", "--porcelain", "--untracked-files=no"],
        root,
    )
    .map(|s| !s.is_empty());
    let commit = match (commit, dirty) {
        (Some(c), Some(true)) => format!("{c} (with uncommitted changes)"),
        (Some(c), _) => c,
        (None, _) => "unknown".into(),
    };
    println!("cargo:rustc-env=DOPPIO_BUILD_COMMIT={commit}");
    let mut watched = vec!["HEAD".to_owned(), "packed-refs".to_owned()];
    if let Some(branch) = output("git", &["symbolic-ref", "-q", "HEAD"], root) {
        watched.push(branch);
    }
    for file in watched {
        if let Some(path) = output("git", &["rev-parse", "--git-path", &file], root) {
            let path = root.join(path);
            if path.exists() {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
    }

    // Versions from the workspace's lock file: `name@version` pairs, comma-separated.
    let lock = root.join("Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    println!("cargo:rerun-if-changed=build.rs");
    let text = std::fs::read_to_string(&lock).unwrap_or_default();
    let mut versions = Vec::new();
    let mut name: Option<&str> = None;
    for line in text.lines() {
        if let Some(n) = line.strip_prefix("name = ") {
            name = Some(n.trim_matches('"'));
        } else if let (Some(v), Some(n)) = (line.strip_prefix("version = "), name.take()) {
            if CRATES.contains(&n) {
                versions.push(format!("{n}@{}", v.trim_matches('"')));
            }
        }
    }
    println!("cargo:rustc-env=DOPPIO_BUILD_CRATES={}", versions.join(","));
}
