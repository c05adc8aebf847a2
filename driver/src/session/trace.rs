//! Reading a traced request's trace back: [`Session::fetch_trace`].
//!
//! A request sent with `StatementConfig::tracing` makes its coordinator record what every
//! node did for it in `system_traces` (the answer carries the trace's id:
//! [`QueryResult::tracing_id`](crate::QueryResult)). The node writes those rows in the
//! background, after it answered: the session row (`system_traces.sessions`) gets its
//! `duration` only when the request is done, and the events (`system_traces.events`) come in
//! as they are logged. So the trace is read again, a bounded number of times ([`TraceWait`]),
//! until its session row is finished, then its events once.
//!
//! Cold path: a few queries per trace, each an ordinary request of the session (counted,
//! retried and routed as any other), at consistency ONE by default (`system_traces` is
//! replicated twice; a trace is diagnostics, not data).
//!
//! Invariant: the wait is bounded (`reads` reads, `interval` apart): a trace that never
//! finishes, or an id no node traced, ends in [`Error::TraceUnavailable`], never in a hang.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use doppio_proto::consistency::Consistency;
use doppio_proto::value::{CqlTimestamp, CqlUuid};

use super::handle::Session;
use super::statement::Statement;
use crate::error::Error;

/// How long [`Session::fetch_trace_with`] waits for a trace to be finished: up to `reads`
/// reads of its session row, `interval` apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceWait {
    /// Reads of `system_traces.sessions` at most (at least one is made).
    pub reads: u32,
    /// The pause between two reads.
    pub interval: Duration,
    /// The consistency of the reads.
    pub consistency: Consistency,
}

impl Default for TraceWait {
    /// Ten reads 30 ms apart (about 300 ms in all), at consistency ONE.
    fn default() -> Self {
        Self {
            reads: 10,
            interval: Duration::from_millis(30),
            consistency: Consistency::One,
        }
    }
}

/// A traced request as its coordinator recorded it (`system_traces.sessions`), with the
/// events every node logged for it (`system_traces.events`), oldest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trace {
    /// The tracing id (`session_id`).
    pub id: [u8; 16],
    /// The node that coordinated the request.
    pub coordinator: IpAddr,
    /// The client's address, as the coordinator saw it.
    pub client: Option<IpAddr>,
    /// How long the coordinator took, from receiving the request to answering it.
    pub duration: Duration,
    /// What was asked, in the server's words (e.g. "Execute CQL3 query").
    pub request: String,
    /// The request's parameters as the server lists them (the query, consistency level,
    /// page size, ...).
    pub parameters: HashMap<String, String>,
    /// When the coordinator started the request.
    pub started_at: SystemTime,
    /// The events, in the order of their ids (their time).
    pub events: Vec<TraceEvent>,
}

/// One event of a [`Trace`]: something one node did for the request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceEvent {
    /// The event's id (a `timeuuid`).
    pub id: [u8; 16],
    /// When it happened: the time of its id (`None` if the id is not a time-based UUID).
    pub timestamp: Option<SystemTime>,
    /// What happened.
    pub activity: String,
    /// The node it happened on.
    pub source: Option<IpAddr>,
    /// Time since that node started working on the request.
    pub source_elapsed: Option<Duration>,
    /// The node's thread that logged it.
    pub thread: Option<String>,
}

/// The session row as read: every column may still be null while the node writes it.
type SessionRow = (
    Option<IpAddr>,
    Option<IpAddr>,
    Option<i32>,
    Option<String>,
    Option<HashMap<String, String>>,
    Option<CqlTimestamp>,
);

/// An event row as read.
type EventRow = (
    CqlUuid,
    Option<String>,
    Option<IpAddr>,
    Option<i32>,
    Option<String>,
);

const SESSION_CQL: &str = "SELECT coordinator, client, duration, request, parameters, started_at \
                           FROM system_traces.sessions WHERE session_id = ?";
const EVENTS_CQL: &str = "SELECT event_id, activity, source, source_elapsed, thread \
                          FROM system_traces.events WHERE session_id = ?";

impl Session {
    /// The trace of a request sent with `StatementConfig::tracing`, by the tracing id
    /// its result carries (`QueryResult::tracing_id`), waiting as [`TraceWait::default`]
    /// says for the node to finish writing it.
    ///
    /// An id no node traced (or whose trace expired: Cassandra keeps them a day), or a
    /// trace still unfinished after the wait, is [`Error::TraceUnavailable`].
    pub async fn fetch_trace(&self, tracing_id: [u8; 16]) -> Result<Trace, Error> {
        self.fetch_trace_with(tracing_id, TraceWait::default())
            .await
    }

    /// [`Session::fetch_trace`], waiting as `wait` says.
    pub async fn fetch_trace_with(
        &self,
        tracing_id: [u8; 16],
        wait: TraceWait,
    ) -> Result<Trace, Error> {
        let settings = |cql: &str| {
            Statement::new(cql).with_config(|c| {
                c.consistency = Some(wait.consistency);
                c.idempotent = true;
            })
        };
        let id = (CqlUuid(tracing_id),);
        let reads = wait.reads.max(1);
        let mut found = false;
        for read in 1..=reads {
            let rows = self.query_unpaged(settings(SESSION_CQL), &id).await?;
            let rows: Vec<SessionRow> = rows.typed_rows()?;
            found |= !rows.is_empty();
            if let Some(trace) = rows
                .into_iter()
                .next()
                .and_then(|r| finished(tracing_id, r))
            {
                return self.with_events(trace, &id, settings(EVENTS_CQL)).await;
            }
            if read < reads {
                doppio_rt::sleep(wait.interval).await;
            }
        }
        Err(Error::TraceUnavailable {
            id: tracing_id,
            found,
            reads,
        })
    }

    /// `trace` with its events, read page by page.
    async fn with_events(
        &self,
        mut trace: Trace,
        id: &(CqlUuid,),
        events: Statement,
    ) -> Result<Trace, Error> {
        let mut pages = self.query_iter(events, id);
        while let Some(page) = pages.next_page().await? {
            let rows: Vec<EventRow> = page.typed_rows()?;
            trace.events.extend(rows.into_iter().map(event));
        }
        Ok(trace)
    }
}

/// The trace of a session row, if the node finished writing it (its duration, coordinator
/// and start are set: they are written apart, the duration last but not necessarily seen
/// last).
fn finished(id: [u8; 16], row: SessionRow) -> Option<Trace> {
    let (coordinator, client, duration, request, parameters, started_at) = row;
    Some(Trace {
        id,
        coordinator: coordinator?,
        client,
        duration: micros(duration?),
        request: request.unwrap_or_default(),
        parameters: parameters.unwrap_or_default(),
        started_at: millis_since_epoch(started_at?.0)?,
        events: Vec::new(),
    })
}

fn event(row: EventRow) -> TraceEvent {
    let (id, activity, source, source_elapsed, thread) = row;
    TraceEvent {
        id: id.0,
        timestamp: uuid_time(&id.0),
        activity: activity.unwrap_or_default(),
        source,
        source_elapsed: source_elapsed.map(micros),
        thread,
    }
}

/// Microseconds as the server counts them (an `int`; a negative one, which no server
/// writes, reads as zero).
fn micros(us: i32) -> Duration {
    Duration::from_micros(u64::try_from(us).unwrap_or(0))
}

/// A CQL `timestamp` (milliseconds since the Unix epoch, signed) as a `SystemTime`; `None`
/// when the platform cannot represent it.
fn millis_since_epoch(ms: i64) -> Option<SystemTime> {
    let d = Duration::from_millis(ms.unsigned_abs());
    if ms >= 0 {
        UNIX_EPOCH.checked_add(d)
    } else {
        UNIX_EPOCH.checked_sub(d)
    }
}

/// 100 ns intervals from the start of the Gregorian calendar (1582-10-15), where version 1
/// UUIDs count from, to the Unix epoch.
const GREGORIAN_TO_UNIX: u64 = 0x01B2_1DD2_1381_4000;

/// The time of a version 1 (time-based) UUID, such as a `timeuuid`; `None` for any other
/// version or a time before the Unix epoch.
pub(crate) fn uuid_time(id: &[u8; 16]) -> Option<SystemTime> {
    if id[6] >> 4 != 1 {
        return None;
    }
    let low = u64::from(u32::from_be_bytes([id[0], id[1], id[2], id[3]]));
    let mid = u64::from(u16::from_be_bytes([id[4], id[5]]));
    let high = u64::from(u16::from_be_bytes([id[6] & 0x0f, id[7]]));
    let ticks = (high << 48) | (mid << 32) | low;
    let since_epoch = ticks.checked_sub(GREGORIAN_TO_UNIX)?;
    UNIX_EPOCH.checked_add(Duration::from_nanos(since_epoch.checked_mul(100)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeuuid_reads_as_its_time_and_another_version_as_none() {
        // A version 1 UUID made at 2024-01-01T00:00:00Z (1704067200 s after the epoch):
        // 1704067200 * 10^7 + GREGORIAN_TO_UNIX = 0x1EEA8425D8BC000 hundred-ns ticks.
        let ticks: u64 = 1_704_067_200 * 10_000_000 + GREGORIAN_TO_UNIX;
        let mut id = [0u8; 16];
        id[0..4].copy_from_slice(&(ticks as u32).to_be_bytes());
        id[4..6].copy_from_slice(&((ticks >> 32) as u16).to_be_bytes());
        id[6..8].copy_from_slice(&(((ticks >> 48) as u16 & 0x0fff) | 0x1000).to_be_bytes());
        id[8] = 0x80;
        assert_eq!(
            uuid_time(&id),
            Some(UNIX_EPOCH + Duration::from_secs(1_704_067_200))
        );
        id[6] = (id[6] & 0x0f) | 0x40; // version 4: random, no time
        assert_eq!(uuid_time(&id), None);
        // Before the epoch: no time rather than a wrapped one.
        assert_eq!(
            uuid_time(&[0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
            None
        );
    }

    #[test]
    fn a_session_row_is_finished_once_its_duration_coordinator_and_start_are_set() {
        let ip: IpAddr = [127, 0, 0, 1].into();
        let row = |coordinator, duration, started| -> SessionRow {
            (
                coordinator,
                None,
                duration,
                Some("Execute CQL3 query".into()),
                None,
                started,
            )
        };
        let done = finished([7; 16], row(Some(ip), Some(1500), Some(CqlTimestamp(1000))));
        let done = done.expect("finished");
        assert_eq!(done.coordinator, ip);
        assert_eq!(done.duration, Duration::from_micros(1500));
        assert_eq!(done.started_at, UNIX_EPOCH + Duration::from_secs(1));
        assert!(done.parameters.is_empty() && done.events.is_empty());
        assert_eq!(
            finished([7; 16], row(Some(ip), None, Some(CqlTimestamp(1)))),
            None
        );
        assert_eq!(
            finished([7; 16], row(None, Some(1), Some(CqlTimestamp(1)))),
            None
        );
        assert_eq!(finished([7; 16], row(Some(ip), Some(1), None)), None);
        assert_eq!(micros(-5), Duration::ZERO);
        assert_eq!(
            millis_since_epoch(-1000),
            UNIX_EPOCH.checked_sub(Duration::from_secs(1))
        );
    }
}
