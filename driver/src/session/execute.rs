//! The future of [`Session::execute_with`]: a request's common case as one state machine.
//!
//! The common case of an EXECUTE is a prepared statement with default options, sent to the
//! node the policy picks first, on a connection with a stream id free at once, and answered
//! there. Written as nested async functions (placement, plan, attempt, connection request),
//! every level kept its own state, re-borrowed its arguments on each poll and handed the
//! result up with a move; here the whole case is one `poll` over three states:
//!
//! ```text
//!   Start --placed, picked, encoded into the write buffer--> Waiting --answered--> done
//!     |                                                          |
//!     +--anything else--> General (boxed)        <--failed, forgotten, schema change--+
//! ```
//!
//! `General` is the general path, boxed: from the start ([`Session::execute_general`]) when
//! the common case does not apply (non-default options, speculative execution, a closed
//! session, no node or connection, no stream id free, compression, a template of another
//! protocol version), or after the first attempt ([`Session::execute_rest`], which heals a
//! forgotten statement and goes on along the plan as the retry policy directs) when its
//! answer is not a plain success. Both count and route exactly as before: the first
//! attempt is counted as started on its node, a success is counted once by the session.
//!
//! Invariants:
//! - Nothing is sent twice: the general path starts from scratch only when nothing was
//!   queued, and otherwise continues from the first attempt's result.
//! - Dropping the future while it waits orphans the stream id (its late answer frees it),
//!   as dropping a [`Connection::request`] does.
//!
//! [`Connection::request`]: crate::connection::Connection::request

use std::future::Future;
use std::num::NonZeroU64;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use doppio_proto::response::ResultBody;
use doppio_proto::values::QueryValues;

use super::plan::Placement;
use super::request::{forgotten, templated, FirstAttempt};
use super::{PreparedStatement, Session, StatementOptions};
use crate::connection::PendingAnswer;
use crate::error::Error;
use crate::result::QueryResult;
use crate::routing::partition_key::PlacedValues;
use crate::routing::ring::NodeIndex;

type BoxedResult<'a> = Pin<Box<dyn Future<Output = Result<QueryResult, Error>> + 'a>>;

/// The future of [`Session::execute_with`] (see the module doc).
pub(super) struct Execute<'a, V: ?Sized> {
    session: &'a Session,
    prepared: &'a PreparedStatement,
    values: &'a V,
    options: &'a StatementOptions<'a>,
    state: State<'a>,
}

enum State<'a> {
    /// Not polled yet.
    Start,
    /// The first attempt is queued on a connection.
    Waiting {
        pending: PendingAnswer,
        index: NodeIndex,
        placement: Placement,
        serialized: Option<NonZeroU64>,
    },
    /// The general path, boxed.
    General(BoxedResult<'a>),
    /// Completed.
    Done,
}

impl<'a, V: QueryValues + ?Sized> Execute<'a, V> {
    pub(super) fn new(
        session: &'a Session,
        prepared: &'a PreparedStatement,
        values: &'a V,
        options: &'a StatementOptions<'a>,
    ) -> Self {
        Execute {
            session,
            prepared,
            values,
            options,
            state: State::Start,
        }
    }

    /// The general path from scratch (nothing was sent).
    fn general(&self) -> State<'a> {
        let (s, p, v, o) = (self.session, self.prepared, self.values, self.options);
        State::General(Box::pin(s.execute_general(p, v, o)))
    }

    /// The general path after the first attempt.
    fn rest(
        &self,
        placement: Placement,
        serialized: Option<NonZeroU64>,
        first: FirstAttempt,
    ) -> State<'a> {
        let (s, p, v, o) = (self.session, self.prepared, self.values, self.options);
        State::General(Box::pin(s.execute_rest(
            p,
            v,
            o,
            placement,
            serialized,
            Some(first),
        )))
    }

    /// Places the request, picks its node and connection and queues it there, or hands it
    /// to the general path.
    fn start(&self) -> State<'a> {
        let (s, prepared, options) = (self.session, self.prepared, self.options);
        let speculative = s.inner.config.speculative.is_some_and(|spec| spec.max > 0);
        if s.inner.closed.borrow().is_some() || (speculative && options.idempotent) {
            return self.general();
        }
        let (placement, serialized) = s.place_prepared(prepared, self.values);
        let routing = placement.routing();
        let Some(index) = s.inner.policy.pick(&placement.view, &routing) else {
            return self.general();
        };
        let Some(node) = placement.view.node(index) else {
            return self.general();
        };
        let Some(conn) = node.pool.pick_for(placement.token) else {
            return self.general();
        };
        if !templated(prepared, options, &conn) {
            return self.general();
        }
        let values = &PlacedValues::new(&s.inner.scratch, serialized, self.values);
        let columns = Some(prepared.inner.metadata.columns.as_slice());
        let template = prepared.inner.template.borrow();
        let queued = conn.try_request(None, |buf, stream| {
            template.encode(buf, stream, values, columns)
        });
        drop(template);
        match queued {
            Ok(Some(pending)) => {
                node.started();
                State::Waiting {
                    pending,
                    index,
                    placement,
                    serialized,
                }
            }
            // No stream id free at once: the general path waits for one (nothing was sent).
            Ok(None) => self.general(),
            Err(e) => {
                node.started();
                let result = Err(Error::from_request(conn.addr(), e));
                self.rest(
                    placement,
                    serialized,
                    FirstAttempt {
                        index,
                        conn,
                        result,
                    },
                )
            }
        }
    }
}

impl<V: QueryValues + ?Sized> Future for Execute<'_, V> {
    type Output = Result<QueryResult, Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        loop {
            match &mut this.state {
                State::Start => this.state = this.start(),
                State::Waiting { pending, .. } => {
                    let answer = ready!(pending.poll_answer(cx));
                    let State::Waiting {
                        pending,
                        index,
                        placement,
                        serialized,
                    } = std::mem::replace(&mut this.state, State::Done)
                    else {
                        unreachable!("matched above");
                    };
                    let conn = pending.connection();
                    let result = match answer {
                        Ok(frame) => this.session.execute_answer(conn, this.prepared, &frame),
                        Err(e) => Err(Error::from_request(conn.addr(), e)),
                    };
                    let plain = match &result {
                        Ok(r) => !matches!(r.body, ResultBody::SchemaChange(_)),
                        Err(_) => false,
                    };
                    if plain && !forgotten(&result) {
                        this.session.count(&result, 0);
                        return Poll::Ready(result);
                    }
                    let first = FirstAttempt {
                        index,
                        conn: conn.clone(),
                        result,
                    };
                    this.state = this.rest(placement, serialized, first);
                }
                State::General(general) => {
                    let result = ready!(general.as_mut().poll(cx));
                    this.state = State::Done;
                    return Poll::Ready(result);
                }
                State::Done => panic!("Session::execute_with polled after completion"),
            }
        }
    }
}
