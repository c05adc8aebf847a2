//! The connections a backend opened as it connected, counted from outside the driver: the
//! process's sockets noted before it connects ([`Before`]), then those that appeared, once
//! they held still, shaped by node and ScyllaDB shard ([`ConnectionShape`]) for CONFIG and
//! the parity check of [`crate::report::connection_shape::parity`].

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use crate::backend::{Backend, ConnectOptions};
use crate::probe::sockets::{own_sockets, settle, SocketsError};
use crate::report::connection_shape::ConnectionShape;

/// How long a backend's connections must hold still before they are counted: drivers return
/// from connecting once each node has one connection and open the rest in the background.
const QUIET: Duration = Duration::from_millis(300);

/// How long the bench waits for that at most (the shape is then marked unsettled).
const LIMIT: Duration = Duration::from_secs(5);

/// The process's sockets before a backend connects.
pub(crate) struct Before(Result<BTreeSet<u64>, SocketsError>);

impl Before {
    /// Notes the sockets open now.
    pub(crate) fn now() -> Self {
        Before(own_sockets())
    }

    /// Counts the connections backend `b` opened since into `shapes` under `name`: nothing
    /// when it opened none (the null backend), a line on stderr when `/proc` could not be
    /// read (the report then has no entry for it).
    pub(crate) fn record(
        self,
        b: &dyn Backend,
        options: &ConnectOptions,
        name: &str,
        shapes: &mut BTreeMap<String, ConnectionShape>,
    ) {
        match self.shape_of(b, options) {
            Ok(shape) if !shape.nodes.is_empty() => {
                shapes.insert(name.to_owned(), shape);
            }
            Ok(_) => {}
            Err(e) => {
                let why = std::error::Error::source(&e).map(ToString::to_string);
                eprintln!(
                    "{name}: connections not counted: {e}: {}",
                    why.unwrap_or_default()
                );
            }
        }
    }

    /// The shape of the connections backend `b` opened since (its nodes' plain port those of
    /// `options.nodes`), once they held still; an error when `/proc` could not be read.
    fn shape_of(
        self,
        b: &dyn Backend,
        options: &ConnectOptions,
    ) -> Result<ConnectionShape, SocketsError> {
        let before = self.0?;
        let opened = settle(&before, QUIET, LIMIT, &mut |d| b.idle(d))?;
        let ends: Vec<_> = opened
            .connections
            .iter()
            .map(|c| (c.local, c.remote))
            .collect();
        let cql_ports: BTreeSet<u16> = options.nodes.iter().map(|n| n.port()).collect();
        let shards: BTreeMap<_, _> = b.scylla_shards();
        Ok(ConnectionShape::of(
            &ends,
            &cql_ports,
            &shards,
            opened.settled,
        ))
    }
}
