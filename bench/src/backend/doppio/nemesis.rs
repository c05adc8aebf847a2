//! The nemesis's acknowledged-writes workload on doppio (`crate::backend::nemesis` says what
//! it does): the table created, the writers' fibers on one shard, the read-back at `ALL`,
//! and doppio's errors mapped onto the history's outcomes ([`outcome_of`]).

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use doppio_driver::proto::consistency::Consistency;
use doppio_driver::rt::Runtime;
use doppio_driver::session::NoRetry;
use doppio_driver::{Error, ErrorKind as DriverKind, Session, SessionConfig, Statement};

use super::error::{err_of, kind_of};
use crate::backend::driver::Driver;
use crate::backend::nemesis::{ReadBackRun, WritesPlan, WritesRun, WritesTarget};
use crate::engine::phase::BackendError;
use crate::nemesis::history::{Answer, Op, OpKind, Outcome};

/// The event loop of `driver`.
fn runtime(driver: Driver) -> Runtime {
    if driver == Driver::DoppioUring {
        Runtime::Uring
    } else {
        Runtime::Glommio
    }
}

/// A session to `target` at `consistency`, each request sent once.
async fn connect(target: &WritesTarget, consistency: Consistency) -> Result<Session, String> {
    let config = SessionConfig::new(target.node)
        .with_consistency(consistency)
        .with_request_timeout(target.request_timeout)
        .with_connect_timeout(target.request_timeout)
        .with_startup_timeout(target.request_timeout.max(Duration::from_secs(10)))
        .with_retry_policy(Arc::new(NoRetry));
    Session::connect(config)
        .await
        .map_err(|e| doppio_driver::error::Report(&e).to_string())
}

fn report(e: &Error) -> String {
    doppio_driver::error::Report(e).to_string()
}

/// Runs `f` on a shard of `target`'s runtime, named `name`, and waits for it.
fn on_shard<T, F, Fut>(target: &WritesTarget, name: &str, f: F) -> Result<T, BackendError>
where
    T: Send + 'static,
    F: FnOnce() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = Result<T, String>> + 'static,
{
    let err = err_of(target.driver);
    doppio_driver::rt::run_on(runtime(target.driver), name, f)
        .map_err(|e| err(format!("start its shard: {e}")))?
        .map_err(err)
}

/// Creates the keyspace (if absent) and the run's table.
pub(crate) fn create_table(target: &WritesTarget) -> Result<(), BackendError> {
    let target = target.clone();
    on_shard(&target.clone(), "nemesis-schema", move || async move {
        let s = connect(&target, Consistency::Quorum).await?;
        let statements = [
            format!(
                "CREATE KEYSPACE IF NOT EXISTS {} WITH replication = \
                 {{'class': 'SimpleStrategy', 'replication_factor': {}}}",
                target.keyspace, target.replication_factor
            ),
            format!(
                "CREATE TABLE {}.{} (k bigint, v bigint, PRIMARY KEY (k, v))",
                target.keyspace, target.table
            ),
        ];
        for cql in &statements {
            if let Err(e) = s.query_unpaged(cql, &()).await {
                s.close("nemesis schema failed");
                return Err(format!("{cql}: {}", report(&e)));
            }
        }
        s.close("nemesis schema");
        Ok(())
    })
}

/// The history's nanoseconds of `at`, counted from `epoch`.
fn ns_since(epoch: Instant, at: Instant) -> u64 {
    u64::try_from(at.saturating_duration_since(epoch).as_nanos()).unwrap_or(u64::MAX)
}

/// Runs the writers until `plan.until` or `plan.stop`.
pub(crate) fn write(target: &WritesTarget, plan: &WritesPlan) -> Result<WritesRun, BackendError> {
    let (target, plan) = (target.clone(), plan.clone());
    on_shard(&target.clone(), "nemesis-writes", move || async move {
        let s = Rc::new(connect(&target, Consistency::Quorum).await?);
        let insert = Statement::new(format!(
            "INSERT INTO {}.{} (k, v) VALUES (?, ?)",
            target.keyspace, target.table
        ))
        .with_config(|c| c.idempotent = true);
        let insert = Rc::new(s.prepare(insert).await.map_err(|e| report(&e))?);
        let ops = Rc::new(RefCell::new(Vec::new()));
        let next = Rc::new(Cell::new(0_i64));
        let fibers: Vec<_> = (0..plan.concurrency)
            .map(|fiber| {
                let (s, insert, ops, next, plan) = (
                    s.clone(),
                    insert.clone(),
                    ops.clone(),
                    next.clone(),
                    plan.clone(),
                );
                doppio_driver::rt::spawn_local(async move {
                    let process = u32::try_from(fiber).unwrap_or(u32::MAX);
                    while Instant::now() < plan.until && !plan.stop.load(Ordering::Relaxed) {
                        let value = next.get();
                        next.set(value + 1);
                        // At least one key (the command line's floor too).
                        let key = value % plan.keys.max(1);
                        let invoked = Instant::now();
                        let result = s.execute_unpaged(&insert, &(key, value)).await;
                        let completed = Instant::now();
                        let outcome = match result {
                            Ok(_) => Outcome::Ok(Answer::Written),
                            Err(e) => outcome_of(e.kind()),
                        };
                        ops.borrow_mut().push(Op {
                            process,
                            key,
                            kind: OpKind::Write { value },
                            invoke_ns: ns_since(plan.epoch, invoked),
                            complete_ns: ns_since(plan.epoch, completed),
                            outcome,
                        });
                    }
                })
            })
            .collect();
        for fiber in fibers {
            fiber.await;
        }
        s.close("nemesis writes done");
        let ops = std::mem::take(&mut *ops.borrow_mut());
        Ok(WritesRun { ops })
    })
}

/// Reads keys `0..keys` at `ALL`, each up to `attempts` times.
pub(crate) fn read_back(
    target: &WritesTarget,
    keys: i64,
    attempts: u32,
    pause: Duration,
) -> Result<ReadBackRun, BackendError> {
    let target = target.clone();
    on_shard(&target.clone(), "nemesis-read-back", move || async move {
        let s = connect(&target, Consistency::All).await?;
        let mut run = ReadBackRun::default();
        for key in 0..keys {
            let mut last = String::new();
            for attempt in 0..attempts.max(1) {
                if attempt > 0 {
                    doppio_driver::rt::sleep(pause).await;
                }
                match read_key(&s, &target, key).await {
                    Ok(values) => {
                        run.keys.insert(key, values);
                        break;
                    }
                    Err(e) => last = e,
                }
            }
            if !run.keys.contains_key(&key) {
                run.unread.insert(key, last);
            }
        }
        s.close("nemesis read-back done");
        Ok(run)
    })
}

/// Every value of `key`, page after page.
async fn read_key(s: &Session, target: &WritesTarget, key: i64) -> Result<Vec<i64>, String> {
    let cql = format!(
        "SELECT v FROM {}.{} WHERE k = {key}",
        target.keyspace, target.table
    );
    let statement = Statement::new(cql).with_config(|c| c.page_size = Some(5000));
    let mut pages = s.query_iter(statement, &());
    let mut values = Vec::new();
    while let Some(page) = pages.next_page().await.map_err(|e| report(&e))? {
        for (v,) in page
            .typed_rows::<(i64,)>()
            .map_err(|e| doppio_driver::error::Report(&e).to_string())?
        {
            values.push(v);
        }
    }
    Ok(values)
}

/// A failed write's outcome: refused (the coordinator said it did not happen, or it was never
/// sent) or unknown (it may have reached replicas: a timeout, a lost connection, a write
/// timeout or failure). A kind not named here is unknown: the safe side, never counted as a
/// refusal that the read-back could contradict. The reason is the bench's kind.
pub(crate) fn outcome_of(kind: DriverKind) -> Outcome {
    let reason = kind_of(kind).as_str().to_owned();
    match kind {
        DriverKind::Unavailable
        | DriverKind::Overloaded
        | DriverKind::Bootstrapping
        | DriverKind::RateLimited
        | DriverKind::Syntax
        | DriverKind::Unauthorized
        | DriverKind::Invalid
        | DriverKind::ConfigError
        | DriverKind::AlreadyExists
        | DriverKind::Unprepared
        | DriverKind::NoConnection
        | DriverKind::Closed
        | DriverKind::Serialization
        | DriverKind::Handshake
        | DriverKind::Tls => Outcome::Failed { reason },
        _ => Outcome::Unknown { reason },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What may have reached a replica is never a refusal; a coordinator's refusal is.
    #[test]
    fn only_what_cannot_have_been_applied_is_refused() {
        for kind in [
            DriverKind::Timeout,
            DriverKind::ConnectionBroken,
            DriverKind::WriteTimeout,
            DriverKind::WriteFailure,
            DriverKind::ServerError,
            DriverKind::Protocol,
        ] {
            assert!(
                matches!(outcome_of(kind), Outcome::Unknown { .. }),
                "{kind:?}"
            );
        }
        assert_eq!(
            outcome_of(DriverKind::Unavailable),
            Outcome::Failed {
                reason: "unavailable".to_owned()
            }
        );
        assert!(matches!(
            outcome_of(DriverKind::NoConnection),
            Outcome::Failed { .. }
        ));
    }
}
