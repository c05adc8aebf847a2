//! The events a stub playing a cluster pushes to the connections that registered for them
//! (REGISTER: `TOPOLOGY_CHANGE`, `STATUS_CHANGE`, `SCHEMA_CHANGE`), and which nodes are
//! down.
//!
//! The log is shared by every executor (a `Mutex`: written when a test or the operator
//! takes a node down or pushes an event, read once per watcher tick, never per request) and
//! keeps the last [`KEPT`] events: a watcher that fell further behind skips the oldest.

use std::collections::VecDeque;
use std::sync::Mutex;

use doppio_proto::response::Event;

/// Events kept for watchers that have not sent them yet.
pub(crate) const KEPT: usize = 1024;

/// The bit of each event type in a connection's registration.
pub(crate) const TOPOLOGY: u8 = 1;
/// `STATUS_CHANGE`.
pub(crate) const STATUS: u8 = 2;
/// `SCHEMA_CHANGE`.
pub(crate) const SCHEMA: u8 = 4;

/// The registration bits of the event type names of a REGISTER (unknown names: none).
pub(crate) fn kinds_named<'a>(names: impl IntoIterator<Item = &'a str>) -> u8 {
    names.into_iter().fold(0, |bits, name| {
        bits | match name {
            "TOPOLOGY_CHANGE" => TOPOLOGY,
            "STATUS_CHANGE" => STATUS,
            "SCHEMA_CHANGE" => SCHEMA,
            _ => 0,
        }
    })
}

/// The registration bit an event needs.
pub(crate) fn kind_of(event: &Event) -> u8 {
    match event {
        Event::TopologyChange { .. } => TOPOLOGY,
        Event::StatusChange { .. } => STATUS,
        Event::SchemaChange(_) => SCHEMA,
    }
}

/// The events pushed so far (the last [`KEPT`]), numbered from 0.
#[derive(Default)]
pub(crate) struct EventLog {
    inner: Mutex<Log>,
}

#[derive(Default)]
struct Log {
    /// The number of the oldest event kept.
    first: u64,
    events: VecDeque<Event>,
}

impl EventLog {
    fn lock(&self) -> std::sync::MutexGuard<'_, Log> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Appends `event`.
    pub(crate) fn push(&self, event: Event) {
        let mut log = self.lock();
        if log.events.len() == KEPT {
            log.events.pop_front();
            log.first += 1;
        }
        log.events.push_back(event);
    }

    /// The number the next event will get.
    pub(crate) fn next_seq(&self) -> u64 {
        let log = self.lock();
        log.first + log.events.len() as u64
    }

    /// The events numbered `cursor` on (those still kept), and the cursor past them.
    pub(crate) fn since(&self, cursor: u64) -> (Vec<Event>, u64) {
        let log = self.lock();
        let next = log.first + log.events.len() as u64;
        let skip = cursor.saturating_sub(log.first);
        let events = usize::try_from(skip)
            .map(|s| log.events.iter().skip(s).cloned().collect())
            .unwrap_or_default();
        (events, next)
    }
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;

    use super::*;

    fn up(i: u8) -> Event {
        Event::StatusChange {
            change: "UP".into(),
            node: SocketAddr::from(([127, 0, 0, i], 9042)),
        }
    }

    #[test]
    fn a_watcher_gets_each_event_once_in_order() {
        let log = EventLog::default();
        let start = log.next_seq();
        log.push(up(1));
        log.push(up(2));
        let (seen, cursor) = log.since(start);
        assert_eq!(seen, [up(1), up(2)]);
        assert_eq!(log.since(cursor).0, []);
        log.push(up(3));
        assert_eq!(log.since(cursor).0, [up(3)]);
    }

    #[test]
    fn the_log_keeps_its_last_events_and_a_late_watcher_skips_the_oldest() {
        let log = EventLog::default();
        for i in 0..KEPT + 5 {
            log.push(up((i % 250) as u8));
        }
        let (seen, next) = log.since(0);
        assert_eq!(seen.len(), KEPT);
        assert_eq!(next, (KEPT + 5) as u64);
        assert_eq!(seen[0], up(5));
    }

    #[test]
    fn registrations_name_their_kinds_and_ignore_unknown_names() {
        assert_eq!(kinds_named(["STATUS_CHANGE"]), STATUS);
        assert_eq!(
            kinds_named(["TOPOLOGY_CHANGE", "SCHEMA_CHANGE", "BOGUS"]),
            TOPOLOGY | SCHEMA
        );
        assert_eq!(kind_of(&up(1)), STATUS);
    }
}
