//! The tests of a backend's segments added up into its report entry.

use super::*;

#[test]
fn what_a_backend_did_parked_adds_up_over_the_others_segments() {
    let parked = ApartCost {
        usage: crate::probe::thread_usage::ThreadUsage {
            cpu: std::time::Duration::from_micros(30),
            voluntary: 2,
            involuntary: 1,
        },
        syscalls: Some(3),
        syscalls_by_kind: Some(ByKind::from_fn(|k| {
            u64::from(k == crate::probe::process_cost::SyscallKind::IoUringEnter)
        })),
        io_uring: Some(IoUringOps {
            submitted: 1,
            completed: 2,
        }),
    };
    let mut run = BackendRun::default();
    assert_eq!(run.report("doppio").while_parked, None, "ran alone");
    run.add_parked(&parked);
    run.add_parked(&ApartCost {
        syscalls: None,
        ..parked
    });
    let w = run.report("doppio").while_parked.unwrap();
    assert_eq!(w.segments, 2);
    assert!((w.cpu_s - 60e-6).abs() < 1e-12);
    assert_eq!(w.ctx_switches, 6);
    assert_eq!(w.syscalls, None, "missing from one segment: missing");
    assert_eq!(w.syscalls_by_kind.map(|k| k.io_uring_enter), Some(2));
    assert_eq!(
        (w.io_uring_submitted, w.io_uring_completed),
        (Some(2), Some(4))
    );
    let merged = w.plus(&w);
    assert_eq!((merged.segments, merged.ctx_switches), (4, 12));
}

#[test]
fn segments_add_up_and_a_count_missing_from_one_is_missing_with_its_reason() {
    use crate::probe::process_cost::{ByKind, Cost, IoUringOps};
    let counted = Cost {
        syscalls: Some(28),
        syscalls_by_kind: Some(ByKind::from_fn(|k| k as u64 + 1)),
        io_uring: Some(IoUringOps {
            submitted: 5,
            completed: 4,
        }),
        ..Cost::default()
    };
    let mut run = BackendRun::default();
    run.add_cost(&counted);
    run.add_cost(&counted);
    let r = run.report("doppio");
    let kinds = r.syscalls.syscalls_by_kind.unwrap();
    assert_eq!(kinds.total(), 56);
    assert_eq!(kinds.other, 14);
    assert_eq!(
        r.syscalls.syscalls_by_kind_per_req,
        Some(kinds.map(|_| 0.0)),
        "no requests"
    );
    assert_eq!(
        (r.io_uring.io_uring_submitted, r.io_uring.io_uring_completed),
        (Some(10), Some(8))
    );

    // The second segment could not count by kind nor io_uring: the total still adds up.
    let mut run = BackendRun::default();
    run.add_cost(&counted);
    run.add_cost(&Cost {
        syscalls: Some(28),
        syscall_kinds_unavailable: Some("filter refused".into()),
        io_uring_unavailable: Some("no io_uring tracepoints".into()),
        ..Cost::default()
    });
    run.add_cost(&counted);
    let r = run.report("scylla");
    assert_eq!(run.overhead.syscalls, Some(84));
    assert_eq!(
        (
            r.syscalls.syscalls_by_kind,
            r.syscalls.syscalls_by_kind_per_req
        ),
        (None, None)
    );
    assert_eq!(
        r.syscalls.syscall_kinds_unavailable.as_deref(),
        Some("filter refused")
    );
    assert_eq!(
        (
            r.io_uring.io_uring_submitted,
            r.io_uring.io_uring_completed_per_req
        ),
        (None, None)
    );
    assert_eq!(
        r.io_uring.io_uring_unavailable.as_deref(),
        Some("no io_uring tracepoints")
    );
    assert_eq!(r.syscalls.syscalls_unavailable, None);
}

#[test]
fn rows_are_reported_per_second_and_per_cpu_time_and_null_when_not_counted() {
    use crate::engine::collect::Sample;
    use std::time::Duration;
    let sample = |rows| Sample {
        index: 0,
        start: Duration::ZERO,
        duration: Duration::from_secs(1),
        requests: 100,
        rows,
        errors: Vec::new(),
        latency: LatencyHistogram::new(),
        service: LatencyHistogram::new(),
        mean_lateness_ns: 0.0,
        target_rps: None,
        statements: Vec::new(),
        nodes: Vec::new(),
        tablet_misroutes: None,
    };
    let mut run = BackendRun {
        elapsed_s: vec![2.0],
        rows_counted: true,
        ..BackendRun::default()
    }
    .with_samples(vec![vec![sample(300), sample(500)]]);
    run.overhead.user_s = 0.003;
    run.overhead.sys_s = 0.001;
    let r = run.report("doppio");
    assert_eq!(r.result_rows.rows, Some(800));
    assert_eq!(r.result_rows.rows_per_s, Some(400.0));
    let per_row = r.result_rows.cpu_us_per_row.unwrap();
    assert!((per_row - 5.0).abs() < 1e-9, "{per_row}");
    // No row read: no CPU per row (not a division by zero, not a zero).
    run = BackendRun {
        elapsed_s: vec![2.0],
        rows_counted: true,
        overhead: std::mem::take(&mut run.overhead),
        ..BackendRun::default()
    }
    .with_samples(vec![vec![sample(0)]]);
    let r = run.report("doppio");
    assert_eq!(
        (r.result_rows.rows, r.result_rows.cpu_us_per_row),
        (Some(0), None)
    );
    // Not counted: null, never a fake zero.
    run.rows_counted = false;
    let r = run.report("doppio");
    assert_eq!(
        (
            r.result_rows.rows,
            r.result_rows.rows_per_s,
            r.result_rows.cpu_us_per_row
        ),
        (None, None, None)
    );
    let j = serde_json::to_value(&r).unwrap();
    assert!(j["rows"].is_null() && j["cpu_us_per_row"].is_null(), "{j}");
}
