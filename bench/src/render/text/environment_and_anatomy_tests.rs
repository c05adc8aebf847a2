//! The text report's tests of the machine and build differences and of the ANATOMY table.

use std::collections::BTreeMap;

use super::*;
use crate::probe::anatomy::Layer;
use crate::probe::environment::Environment;
use crate::report::{AnatomyReport, RunConfig};

fn report(driver: &str, environment: Option<Environment>, b: BackendReport) -> Report {
    Report {
        config: RunConfig {
            drivers: vec![driver.to_owned()],
            ..RunConfig::default()
        },
        backends: BTreeMap::from([(driver.to_owned(), b)]),
        environment,
        ..Report::default()
    }
}

fn backend(cpu: f64, anatomy: Option<AnatomyReport>) -> BackendReport {
    let mut b = crate::report::BackendRun::default().report("doppio");
    b.throughput.requests = 1000;
    b.client_cpu.cpu_us_per_req = cpu;
    b.anatomy = anatomy;
    b
}

#[test]
fn show_names_every_difference_of_machine_and_build() {
    let here = Environment::here();
    let mut other = here.clone();
    other.kernel = Some("5.15.0".into());
    other.rustc = "rustc 1.80.0".into();
    let a = report("doppio", Some(here.clone()), backend(1.0, None));
    let b = report("doppio", Some(other), backend(1.0, None));
    let out = render_pair(&b, &a);
    assert!(out.contains("ENVIRONMENT  warning: "), "{out}");
    let kernel = format!(
        "kernel: {} vs 5.15.0",
        here.kernel.clone().unwrap_or_default()
    );
    assert!(out.contains(&kernel), "{out}");
    assert!(
        out.contains(&format!("rustc: {} vs rustc 1.80.0", here.rustc)),
        "{out}"
    );
    // The same machine and build: said so.
    let same = render_pair(&a, &a);
    assert!(
        same.contains("ENVIRONMENT  the same machine and build in both reports"),
        "{same}"
    );
    // A report from before environments were recorded: not compared, and why.
    let old = report("doppio", None, backend(1.0, None));
    assert!(render_pair(&a, &old).contains("ENVIRONMENT  not compared"));
    // One report alone: its machine and build in CONFIG.
    let alone = render(&a, false);
    assert!(alone.contains("  machine       Linux "), "{alone}");
    assert!(alone.contains("  build         commit "), "{alone}");
}

#[test]
fn the_anatomy_table_shows_every_layer_and_compares_two_reports() {
    let anatomy = |codec: f64, driver: f64| AnatomyReport {
        sampling: "perf record -e cpu-clock -F 499 --call-graph dwarf,8192".into(),
        sampled_cpu_us_per_req: codec + driver,
        us_per_req: BTreeMap::from([(Layer::Codec, codec), (Layer::Driver, driver)]),
        skipped_lines: 0,
        recorder_cpu_us_per_req: Some(0.1),
        folded: None,
    };
    let a = report("doppio", None, backend(1.0, Some(anatomy(0.25, 0.75))));
    let b = report("doppio", None, backend(2.0, Some(anatomy(0.5, 1.5))));
    let out = render_pair(&b, &a);
    let table = out.split("ANATOMY [us/req]").nth(1).unwrap_or_default();
    assert!(table.contains("  codec"), "{out}");
    // Every layer is a row, 0 where it had no sample.
    for layer in Layer::ALL {
        assert!(
            table.contains(&format!("  {}", layer.name())),
            "{}: {out}",
            layer.name()
        );
    }
    let codec = table
        .lines()
        .find(|l| l.starts_with("    codec"))
        .unwrap_or_default();
    assert!(codec.contains("+100.0%"), "{codec}");
    // Without sampled stacks there is no table.
    let plain = report("doppio", None, backend(1.0, None));
    assert!(!render(&plain, false).contains("ANATOMY"));
    // Samples that stand for much less than the measured CPU are pointed out.
    let mut thin = anatomy(0.1, 0.1);
    thin.sampled_cpu_us_per_req = 0.2;
    let thin = report("doppio", None, backend(1.0, Some(thin)));
    assert!(render(&thin, false).contains("the samples stand for 0.20 us per request"));
}
