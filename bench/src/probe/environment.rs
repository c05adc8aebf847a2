//! The machine and the build a run was measured with, stored in every report
//! (`environment`): the kernel, the CPU model and count, the CPU vulnerability mitigations,
//! the frequency governor where the machine exposes one, the compiler, the git commit the
//! bench was built from, its build profile and features, and the versions of the driver
//! crates (from `build.rs`). `doppio show A B` names every field in which two reports
//! differ ([`differences`]), since a figure measured under another kernel or mitigation set
//! is not the same experiment.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// Where the kernel lists its CPU vulnerabilities and their mitigations.
const VULNERABILITIES: &str = "/sys/devices/system/cpu/vulnerabilities";
/// The first CPU's frequency governor.
const GOVERNOR: &str = "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor";

/// The machine and the build of one run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    /// The kernel's release (`uname -r`).
    pub kernel: Option<String>,
    /// The CPU's model name (`/proc/cpuinfo`).
    pub cpu_model: Option<String>,
    /// CPUs online on the machine.
    pub cpus_online: Option<usize>,
    /// CPUs this process may run on (its affinity mask).
    pub cpus_allowed: Option<usize>,
    /// Each CPU vulnerability the kernel lists and its state (`Mitigation: ...`,
    /// `Not affected`, `Vulnerable`), by file name.
    pub mitigations: BTreeMap<String, String>,
    /// The frequency governor of CPU 0, `null` where none is readable (many VMs).
    pub governor: Option<String>,
    /// Why there is no governor.
    pub governor_unavailable: Option<String>,
    /// The compiler that built the bench (`rustc --version`).
    pub rustc: String,
    /// The git commit the bench was built from, with a note when the tree had uncommitted
    /// changes at build time.
    pub git_commit: String,
    /// `release` or `debug` (debug assertions on).
    pub build_profile: String,
    /// Cargo features of the bench that change what it measures (`alloc-count`).
    pub features: Vec<String>,
    /// Versions of the driver crates built in (name to version, from Cargo.lock).
    pub crates: BTreeMap<String, String>,
}

impl Environment {
    /// This machine and this build, now.
    pub fn here() -> Self {
        let read = |path: &str| {
            std::fs::read_to_string(path)
                .ok()
                .map(|s| s.trim().to_owned())
        };
        let (governor, governor_unavailable) = match std::fs::read_to_string(GOVERNOR) {
            Ok(g) => (Some(g.trim().to_owned()), None),
            Err(e) => (None, Some(format!("{GOVERNOR}: {e}"))),
        };
        Environment {
            kernel: read("/proc/sys/kernel/osrelease"),
            cpu_model: read("/proc/cpuinfo").and_then(|t| cpu_model(&t)),
            cpus_online: read("/sys/devices/system/cpu/online").and_then(|t| cpu_count(&t)),
            cpus_allowed: std::thread::available_parallelism().ok().map(Into::into),
            mitigations: mitigations(Path::new(VULNERABILITIES)),
            governor,
            governor_unavailable,
            rustc: env!("DOPPIO_BUILD_RUSTC").to_owned(),
            git_commit: env!("DOPPIO_BUILD_COMMIT").to_owned(),
            build_profile: if cfg!(debug_assertions) {
                "debug"
            } else {
                "release"
            }
            .to_owned(),
            features: if cfg!(feature = "alloc-count") {
                vec!["alloc-count".to_owned()]
            } else {
                Vec::new()
            },
            crates: crates(env!("DOPPIO_BUILD_CRATES")),
        }
    }
}

/// The first `model name` of `/proc/cpuinfo`.
fn cpu_model(cpuinfo: &str) -> Option<String> {
    cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|rest| rest.split_once(':'))
        .map(|(_, m)| m.trim().to_owned())
}

/// How many CPUs a kernel CPU list names (`0-3,6,8-9` is 7).
fn cpu_count(list: &str) -> Option<usize> {
    let mut n = 0;
    for part in list.trim().split(',').filter(|p| !p.is_empty()) {
        n += match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (a.parse::<usize>().ok()?, b.parse::<usize>().ok()?);
                b.checked_sub(a)? + 1
            }
            None => {
                part.parse::<usize>().ok()?;
                1
            }
        };
    }
    Some(n)
}

/// Every file of the vulnerabilities folder and its first line.
fn mitigations(dir: &Path) -> BTreeMap<String, String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return BTreeMap::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let text = std::fs::read_to_string(e.path()).ok()?;
            Some((
                e.file_name().to_string_lossy().into_owned(),
                text.lines().next().unwrap_or_default().trim().to_owned(),
            ))
        })
        .collect()
}

/// `name@version,...` as a map.
fn crates(list: &str) -> BTreeMap<String, String> {
    list.split(',')
        .filter_map(|c| c.split_once('@'))
        .map(|(n, v)| (n.to_owned(), v.to_owned()))
        .collect()
}

/// Every field in which `a` and `b` differ, as `what: A's vs B's` (empty: the same machine
/// and build, as far as the reports say).
pub(crate) fn differences(a: &Environment, b: &Environment) -> Vec<String> {
    let mut out = Vec::new();
    let text = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
    let count = |v: &Option<usize>| v.map_or_else(|| "unknown".into(), |n| n.to_string());
    let mut field = |what: &str, x: String, y: String| {
        if x != y {
            out.push(format!("{what}: {x} vs {y}"));
        }
    };
    field("kernel", text(&a.kernel), text(&b.kernel));
    field("CPU model", text(&a.cpu_model), text(&b.cpu_model));
    field("CPUs online", count(&a.cpus_online), count(&b.cpus_online));
    field(
        "CPUs allowed",
        count(&a.cpus_allowed),
        count(&b.cpus_allowed),
    );
    field("governor", text(&a.governor), text(&b.governor));
    field("rustc", a.rustc.clone(), b.rustc.clone());
    field("commit", a.git_commit.clone(), b.git_commit.clone());
    field("build", a.build_profile.clone(), b.build_profile.clone());
    let features = |f: &Vec<String>| {
        if f.is_empty() {
            "none".to_owned()
        } else {
            f.join(",")
        }
    };
    field("features", features(&a.features), features(&b.features));
    let names: std::collections::BTreeSet<&String> =
        a.crates.keys().chain(b.crates.keys()).collect();
    for name in names {
        let v = |m: &BTreeMap<String, String>| m.get(name).cloned().unwrap_or("none".into());
        field(name, v(&a.crates), v(&b.crates));
    }
    let vulns: std::collections::BTreeSet<&String> =
        a.mitigations.keys().chain(b.mitigations.keys()).collect();
    for name in vulns {
        let v = |m: &BTreeMap<String, String>| m.get(name).cloned().unwrap_or("unlisted".into());
        field(
            &format!("mitigation {name}"),
            v(&a.mitigations),
            v(&b.mitigations),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_machine_and_build_are_described() {
        let e = Environment::here();
        // Linux always has these.
        assert!(e.kernel.as_deref().is_some_and(|k| !k.is_empty()), "{e:?}");
        assert!(e.cpus_online.is_some_and(|n| n >= 1), "{e:?}");
        assert!(e.cpus_allowed.is_some_and(|n| n >= 1), "{e:?}");
        assert!(e.cpus_allowed <= e.cpus_online, "{e:?}");
        assert!(e.rustc.starts_with("rustc "), "{}", e.rustc);
        // Built from a git checkout with git installed: the build found its commit.
        let git = std::process::Command::new("git")
            .args(["rev-parse", "HEAD"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .is_ok_and(|o| o.status.success());
        if git {
            assert!(
                e.git_commit.len() >= 40
                    && e.git_commit[..40].chars().all(|c| c.is_ascii_hexdigit()),
                "{}",
                e.git_commit
            );
        } else {
            assert_eq!(e.git_commit, "unknown");
        }
        assert_eq!(
            e.build_profile,
            if cfg!(debug_assertions) {
                "debug"
            } else {
                "release"
            }
        );
        for name in ["scylla", "tokio", "glommio", "io-uring"] {
            assert!(e.crates.contains_key(name), "{name}: {:?}", e.crates);
        }
        // A governor or why not; mitigations listed where the kernel has the folder.
        assert!(
            e.governor.is_some() != e.governor_unavailable.is_some(),
            "{e:?}"
        );
        if Path::new(VULNERABILITIES).exists() {
            assert!(
                e.mitigations.contains_key("spectre_v2"),
                "{:?}",
                e.mitigations
            );
        }
        // It survives the report's JSON.
        let json = serde_json::to_string(&e).unwrap();
        assert_eq!(serde_json::from_str::<Environment>(&json).unwrap(), e);
    }

    #[test]
    fn files_are_read_as_the_kernel_writes_them() {
        let info = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9R14 96-Core Processor\n";
        assert_eq!(
            cpu_model(info).as_deref(),
            Some("AMD EPYC 9R14 96-Core Processor")
        );
        assert_eq!(cpu_model("processor : 0\n"), None);
        assert_eq!(cpu_count("0-1\n"), Some(2));
        assert_eq!(cpu_count("0-3,6,8-9"), Some(7));
        assert_eq!(cpu_count("0"), Some(1));
        assert_eq!(cpu_count("3-1"), None);
        assert_eq!(cpu_count("x"), None);
        assert_eq!(
            crates("scylla@1.9.0,tokio@1.54.1"),
            BTreeMap::from([
                ("scylla".to_owned(), "1.9.0".to_owned()),
                ("tokio".to_owned(), "1.54.1".to_owned())
            ])
        );
        assert!(crates("").is_empty());
    }

    #[test]
    fn two_environments_differ_field_by_field() {
        let a = Environment {
            kernel: Some("6.18.0".into()),
            cpu_model: Some("AMD EPYC".into()),
            cpus_online: Some(2),
            cpus_allowed: Some(2),
            mitigations: BTreeMap::from([
                ("spectre_v2".to_owned(), "Mitigation: Retpolines".to_owned()),
                ("mds".to_owned(), "Not affected".to_owned()),
            ]),
            governor: None,
            governor_unavailable: Some("absent".into()),
            rustc: "rustc 1.91.0".into(),
            git_commit: "abc".into(),
            build_profile: "release".into(),
            features: Vec::new(),
            crates: BTreeMap::from([("scylla".to_owned(), "1.9.0".to_owned())]),
        };
        assert!(differences(&a, &a.clone()).is_empty());
        let mut b = a.clone();
        b.kernel = Some("6.17.2".into());
        b.mitigations
            .insert("spectre_v2".into(), "Vulnerable".into());
        b.mitigations.remove("mds");
        b.crates.insert("scylla".into(), "1.3.0".into());
        b.features = vec!["alloc-count".into()];
        b.governor = Some("performance".into());
        assert_eq!(
            differences(&a, &b),
            vec![
                "kernel: 6.18.0 vs 6.17.2",
                "governor: unknown vs performance",
                "features: none vs alloc-count",
                "scylla: 1.9.0 vs 1.3.0",
                "mitigation mds: Not affected vs unlisted",
                "mitigation spectre_v2: Mitigation: Retpolines vs Vulnerable",
            ]
        );
    }
}
