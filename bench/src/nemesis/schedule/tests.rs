use std::collections::BTreeSet;

use super::*;

const SECOND: u64 = 1_000_000_000;

fn options(seed: u64) -> ScheduleOptions {
    ScheduleOptions {
        seed,
        run_ns: 600 * SECOND,
        nodes: 3,
        replication_factor: 3,
        mean_gap_ns: 20 * SECOND,
        min_fault_ns: 5 * SECOND,
        max_fault_ns: 40 * SECOND,
        settle_ns: 10 * SECOND,
        allow_quorum_loss: false,
        kinds: vec![FaultKind::Kill, FaultKind::Pause, FaultKind::Stop],
    }
}

/// Asserts what every schedule must hold: faults in order of start, each healing after it
/// starts and by the run's end, on distinct existing nodes (numbered from 1); at every fault's start no more
/// nodes down than the bound; no node chosen again before its last fault healed and settled.
fn assert_sound(schedule: &Schedule) {
    let options = &schedule.options;
    let mut up_at = vec![0_u64; options.nodes];
    let mut previous_start = 0;
    for fault in &schedule.faults {
        assert!(fault.start_ns >= previous_start, "{fault:?}");
        previous_start = fault.start_ns;
        assert!(fault.start_ns < fault.heal_ns, "{fault:?}");
        assert!(fault.heal_ns <= options.run_ns, "{fault:?}");
        let duration = fault.heal_ns - fault.start_ns;
        assert!((options.min_fault_ns..=options.max_fault_ns).contains(&duration));
        assert!(!fault.nodes.is_empty());
        assert!(
            fault.nodes.windows(2).all(|pair| pair[0] < pair[1]),
            "{fault:?}"
        );
        for &node in &fault.nodes {
            assert!((1..=options.nodes).contains(&node), "{fault:?}");
            assert!(
                up_at[node - 1] <= fault.start_ns,
                "node {node} chosen again too soon"
            );
            up_at[node - 1] = fault.heal_ns + options.settle_ns;
        }
        assert!(options.kinds.contains(&fault.kind));
        let down = schedule.down_at(fault.start_ns);
        assert!(
            down <= schedule.max_down,
            "{down} down at {}",
            fault.start_ns
        );
    }
}

/// One seed, one schedule: drawn twice, the same; other seeds give other schedules.
#[test]
fn a_seed_gives_one_schedule() {
    let first = Schedule::draw(options(42)).unwrap();
    assert_eq!(first, Schedule::draw(options(42)).unwrap());
    assert!(first.faults.len() >= 5, "{first:?}");
    let others: BTreeSet<String> = (0..10)
        .map(|seed| format!("{:?}", Schedule::draw(options(seed)).unwrap().faults))
        .collect();
    assert_eq!(others.len(), 10);
}

/// Replication factor 3: one node down at a time, every fault a single node; the faults
/// never overlap once their settle is counted, and every fault heals within the run.
#[test]
fn rf3_takes_one_node_at_a_time() {
    for seed in 0..50 {
        let schedule = Schedule::draw(options(seed)).unwrap();
        assert_eq!(schedule.max_down, 1);
        assert_sound(&schedule);
        assert!(schedule.faults.iter().all(|fault| fault.nodes.len() == 1));
        for pair in schedule.faults.windows(2) {
            assert!(pair[1].start_ns >= pair[0].heal_ns + schedule.options.settle_ns);
        }
    }
}

/// With quorum loss allowed, RF 3 may lose two nodes at once, never three; over many seeds
/// both a two-node fault and two overlapping single faults occur.
#[test]
fn rf3_with_quorum_loss_takes_at_most_two() {
    let mut two_at_once = 0;
    let mut overlapping = 0;
    for seed in 0..50 {
        let schedule = Schedule::draw(ScheduleOptions {
            allow_quorum_loss: true,
            ..options(seed)
        })
        .unwrap();
        assert_eq!(schedule.max_down, 2);
        assert_sound(&schedule);
        two_at_once += schedule
            .faults
            .iter()
            .filter(|f| f.nodes.len() == 2)
            .count();
        overlapping += schedule
            .faults
            .windows(2)
            .filter(|pair| pair[1].start_ns < pair[0].heal_ns)
            .count();
    }
    assert!(
        two_at_once > 0 && overlapping > 0,
        "{two_at_once} {overlapping}"
    );
}

/// Five nodes at RF 5 spare two; five nodes at RF 3 spare one (the bound counts every node,
/// since any may hold a key's replicas).
#[test]
fn the_bound_follows_the_replication_factor() {
    let five = |replication_factor| ScheduleOptions {
        nodes: 5,
        replication_factor,
        ..options(7)
    };
    let rf5 = Schedule::draw(five(5)).unwrap();
    assert_eq!(rf5.max_down, 2);
    assert_sound(&rf5);
    let rf3 = Schedule::draw(five(3)).unwrap();
    assert_eq!(rf3.max_down, 1);
    assert_sound(&rf3);
    assert!(rf3.faults.iter().any(|fault| fault.nodes[0] >= 4));
}

/// Every kind of fault is drawn, and only the kinds asked for.
#[test]
fn kinds_are_drawn_from_the_options() {
    let drawn: BTreeSet<String> = (0..20)
        .flat_map(|seed| Schedule::draw(options(seed)).unwrap().faults)
        .map(|fault| format!("{:?}", fault.kind))
        .collect();
    assert_eq!(drawn.len(), 3, "{drawn:?}");
    let paused = Schedule::draw(ScheduleOptions {
        kinds: vec![FaultKind::Pause],
        ..options(3)
    })
    .unwrap();
    assert!(!paused.faults.is_empty());
    assert!(paused
        .faults
        .iter()
        .all(|fault| fault.kind == FaultKind::Pause));
}

/// A run too short for the shortest fault has none; one just long enough may.
#[test]
fn a_fault_that_would_not_heal_in_time_is_not_drawn() {
    let short = Schedule::draw(ScheduleOptions {
        run_ns: 4 * SECOND,
        ..options(1)
    })
    .unwrap();
    assert!(short.faults.is_empty());
}

/// Options that allow no fault or make no sense are refused, each with its reason.
#[test]
fn impossible_options_are_refused() {
    let refused = |options: ScheduleOptions| Schedule::draw(options).unwrap_err();
    assert!(matches!(
        refused(ScheduleOptions {
            replication_factor: 4,
            ..options(0)
        }),
        ScheduleError::ReplicationFactor { .. }
    ));
    assert!(matches!(
        refused(ScheduleOptions {
            replication_factor: 0,
            ..options(0)
        }),
        ScheduleError::ReplicationFactor { .. }
    ));
    assert!(matches!(
        refused(ScheduleOptions {
            replication_factor: 2,
            ..options(0)
        }),
        ScheduleError::NoNodeMayFail { .. }
    ));
    assert_eq!(
        ScheduleOptions {
            replication_factor: 2,
            allow_quorum_loss: true,
            ..options(0)
        }
        .max_down(),
        Ok(1)
    );
    assert!(matches!(
        refused(ScheduleOptions {
            nodes: 1,
            replication_factor: 1,
            allow_quorum_loss: true,
            ..options(0)
        }),
        ScheduleError::NoNodeMayFail { .. }
    ));
    assert!(matches!(
        refused(ScheduleOptions {
            min_fault_ns: 50 * SECOND,
            ..options(0)
        }),
        ScheduleError::Durations { .. }
    ));
    assert!(matches!(
        refused(ScheduleOptions {
            mean_gap_ns: 0,
            ..options(0)
        }),
        ScheduleError::Durations { .. }
    ));
    assert_eq!(
        refused(ScheduleOptions {
            kinds: Vec::new(),
            ..options(0)
        }),
        ScheduleError::NoKinds
    );
}

/// A schedule written as JSON reads back the same, for the report.
#[test]
fn a_schedule_survives_json() {
    let schedule = Schedule::draw(options(9)).unwrap();
    let json = serde_json::to_string(&schedule).unwrap();
    assert!(json.contains("\"kind\":\""), "{json}");
    let back: Schedule = serde_json::from_str(&json).unwrap();
    assert_eq!(back, schedule);
}
