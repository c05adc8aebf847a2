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
//!     |   \                                                    ^    |
//!     |    +--no stream id free--> Acquiring --id, encoded-----+    |
//!     |                               | (timed out, closed: as failed)
//!     +--anything else--> General (boxed)        <--failed, forgotten, schema change--+
//! ```
//!
//! `Acquiring` waits in the connection's queue for a stream id ([`StreamWait`]) inside this
//! future: boxing the general path there instead cost every request queued behind a full
//! stream-id space a heap allocation of its own (100,000 concurrent requests on one
//! connection held ~60 MiB more; `driver/tests/it/cassandra_many_requests.rs` bounds it).
//!
//! `General` is the general path, boxed: from the start ([`Session::execute_general`]) when
//! the common case does not apply (non-default options, speculative execution, a closed
//! session, no node or connection, compression, a template of another protocol version),
//! or after the first attempt ([`Session::execute_rest`], which heals a
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
//! - A node's attempt is counted when its frame is queued (or its wait for an id failed),
//!   once: the general path taken from `Acquiring` (the template stopped applying while it
//!   waited) starts from scratch with nothing counted and nothing sent.
//!
//! [`Connection::request`]: crate::connection::Connection::request
//! [`StreamWait`]: crate::connection::StreamWait

use std::future::Future;
use std::num::NonZeroU64;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use doppio_proto::request::PageRequest;
use doppio_proto::response::ResultBody;
use doppio_proto::values::QueryValues;

use super::attempt::{
    encode_templated, forgotten, own_page_of, paged_answer, partial, template_fits, FirstAttempt,
};
use super::config::StatementOptions;
use super::handle::Session;
use super::latency::Started;
use super::plan::Placement;
use super::prepared::PreparedStatement;
use super::statement::Paging;
use crate::connection::{PendingAnswer, StreamWait};
use crate::error::Error;
use crate::result::QueryResult;
use crate::routing::partition_key::PlacedValues;
use crate::routing::ring::NodeIndex;

/// A request's future whose answer is checked or shaped on the way out (the unpaged
/// check, a page): one branch, not a level of async nesting (each hands its result up
/// with a move).
pub(super) struct Answered<F, M> {
    future: F,
    map: M,
}

impl<F, M> Answered<F, M> {
    pub(super) fn new(future: F, map: M) -> Self {
        Self { future, map }
    }
}

impl<T, F, M> Future for Answered<F, M>
where
    F: Future<Output = Result<QueryResult, Error>> + Unpin,
    M: Fn(Result<QueryResult, Error>) -> Result<T, Error> + Unpin,
{
    type Output = Result<T, Error>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let answer = ready!(Pin::new(&mut this.future).poll(cx));
        Poll::Ready((this.map)(answer))
    }
}

type BoxedResult<'a> = Pin<Box<dyn Future<Output = Result<QueryResult, Error>> + 'a>>;

/// The future of [`Session::execute_with`] (see the module doc).
pub(crate) struct Execute<'a, V: ?Sized> {
    call: Call<'a, V>,
    /// A field apart from the call's arguments, so that a state is written in place
    /// ([`Call::start`]): returned by a method that borrows the whole future, the next state
    /// was built on the stack and copied in (176 bytes through `memcpy`, with a call to
    /// drop the old one: 5 % of a request's time in memory, `request_path` bench).
    state: State<'a>,
    /// When it was first polled (for the session's latency histogram).
    started: Started,
}

/// The arguments of an [`Execute`]: what its states are built from.
struct Call<'a, V: ?Sized> {
    session: &'a Session,
    prepared: &'a PreparedStatement,
    values: &'a V,
    /// The call's page; with the statement's settings, the request's options
    /// ([`Call::options`]: resolved where they are read, so that the future stays small
    /// and is moved cheaply).
    paging: Paging<'a>,
}

/// The two waiting states keep the first attempt's target (index, placement, serialized)
/// as fields of their own: one struct shared by both, built after the node is counted, cost
/// 18 ns per request (`request_path` bench, `e2e/uring/memory/c256`: 251 -> 271 ns).
enum State<'a> {
    /// Not polled yet.
    Start,
    /// No stream id was free at once: queued for one on the picked connection.
    Acquiring {
        wait: StreamWait,
        index: NodeIndex,
        placement: Placement,
        serialized: Option<NonZeroU64>,
    },
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
        paging: Paging<'a>,
    ) -> Self {
        Execute {
            call: Call {
                session,
                prepared,
                values,
                paging,
            },
            state: State::Start,
            started: Started::NOT_YET,
        }
    }
}

impl<'a, V: QueryValues + ?Sized> Call<'a, V> {
    /// Whether `result` is refused as the answer of this call: an unpaged call answered with
    /// only a page ([`super::attempt::whole`]). Checked here, by reference, rather than by a
    /// wrapping future or a function that takes the result and gives it back: each moved
    /// every result once more on its way out.
    #[inline]
    fn partial(&self, result: &Result<QueryResult, Error>) -> bool {
        matches!(self.paging, Paging::Unpaged) && partial(result)
    }

    /// The request's options: the statement's settings with the call's page (the general
    /// path's; the common case reads the few it needs where it needs them).
    #[inline]
    fn options(&self) -> StatementOptions<'a> {
        self.prepared.config.options(self.paging)
    }

    /// The page the request asks for when it is not the template's
    /// ([`super::attempt::own_page`]), its statement's settings being plain
    /// ([`StatementConfig::is_plain`](super::StatementConfig::is_plain)): no profile to
    /// take a page size from.
    #[inline]
    fn own_page(&self) -> Option<PageRequest<'a>> {
        let (size, state) = self.paging.page(self.prepared.config.page_size);
        own_page_of(size, state, self.session.inner.config.page_size)
    }

    /// The general path from scratch (nothing was sent).
    fn general(&self) -> State<'a> {
        let (s, p, v, o) = (self.session, self.prepared, self.values, self.options());
        State::General(Box::pin(s.execute_general(p, v, o)))
    }

    /// The general path after the first attempt.
    fn rest(
        &self,
        placement: Placement,
        serialized: Option<NonZeroU64>,
        first: FirstAttempt,
    ) -> State<'a> {
        let (s, p, v, o) = (self.session, self.prepared, self.values, self.options());
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
    /// to the general path: the next state written into `state` (which is `Start`) in place.
    #[inline(always)]
    fn start(&self, state: &mut State<'a>) {
        if self.start_common(state).is_none() {
            *state = self.general();
        }
    }

    /// [`Call::start`]'s common case: `None`, with `state` untouched, when it does not apply.
    #[inline(always)]
    fn start_common(&self, state: &mut State<'a>) -> Option<()> {
        let (s, prepared) = (self.session, self.prepared);
        let config = &prepared.config;
        // Settings of the statement's own (its profile's too) and speculative execution (the
        // session's, for an idempotent statement) go the general way; a plain statement's
        // settings are read here without resolving its options.
        let speculative =
            config.idempotent && s.inner.config.speculative.is_some_and(|spec| spec.max > 0);
        if !config.is_plain() || speculative || s.inner.closed.borrow().is_some() {
            return None;
        }
        let (placement, serialized) = s.place_prepared(prepared, self.values, None);
        let routing = placement.routing();
        let index = s.inner.policy.pick(&placement.view, &routing)?;
        let node = placement.view.node(index)?;
        let conn = placement.connection(index, node)?;
        if !template_fits(prepared, &conn) {
            return None;
        }
        let values = &PlacedValues::new(&s.inner.scratch, serialized, self.values);
        let columns = Some(prepared.inner.metadata.columns.as_slice());
        let template = prepared.inner.template.borrow();
        let page = self.own_page();
        let block = placement.tablet_block();
        let queued = conn.try_request(None, |buf, stream| {
            encode_templated(&template, page, block, buf, stream, values, columns)
        });
        drop(template);
        match queued {
            Ok(Some(pending)) => {
                node.started();
                *state = State::Waiting {
                    pending,
                    index,
                    placement,
                    serialized,
                };
            }
            // No stream id free at once: wait for one here (nothing was sent yet).
            Ok(None) => {
                *state = State::Acquiring {
                    wait: conn.wait_for_stream(None),
                    index,
                    placement,
                    serialized,
                };
            }
            Err(e) => {
                node.started();
                let result = Err(Error::from_request(conn.addr(), e));
                *state = self.rest(
                    placement,
                    serialized,
                    FirstAttempt {
                        index,
                        conn,
                        result,
                    },
                );
            }
        }
        Some(())
    }
}

impl<'a, V: QueryValues + ?Sized> Call<'a, V> {
    /// The stream id waited for in `Acquiring` is held (or will not come: `acquired` is
    /// the error): the frame is encoded on it and the first attempt waits for its answer,
    /// or the attempt fails as one on the node would.
    fn acquired(
        &self,
        acquired: Result<(), crate::connection::RequestError>,
        wait: StreamWait,
        index: NodeIndex,
        placement: Placement,
        serialized: Option<NonZeroU64>,
    ) -> State<'a> {
        let (s, prepared) = (self.session, self.prepared);
        let conn = wait.connection().clone();
        let node = placement.view.node(index).cloned();
        let failed = |e| {
            if let Some(node) = &node {
                node.started();
            }
            FirstAttempt {
                index,
                conn: conn.clone(),
                result: Err(Error::from_request(conn.addr(), e)),
            }
        };
        if let Err(e) = acquired {
            let first = failed(e);
            return self.rest(placement, serialized, first);
        }
        // The template is checked again: the statement may have been prepared anew (in
        // another protocol version) while the request waited. (Its settings cannot have
        // changed: the statement is borrowed.)
        if !template_fits(prepared, &conn) {
            drop(wait); // frees the id: nothing was sent
            return self.general();
        }
        let values = &PlacedValues::new(&s.inner.scratch, serialized, self.values);
        let columns = Some(prepared.inner.metadata.columns.as_slice());
        let template = prepared.inner.template.borrow();
        let page = self.own_page();
        let block = placement.tablet_block();
        let sent = wait.send(|buf, stream| {
            encode_templated(&template, page, block, buf, stream, values, columns)
        });
        drop(template);
        match sent {
            Ok(Some(pending)) => {
                if let Some(node) = &node {
                    node.started();
                }
                State::Waiting {
                    pending,
                    index,
                    placement,
                    serialized,
                }
            }
            // Unreachable (an id is held once `poll_stream` is ready); nothing was sent.
            Ok(None) => self.general(),
            Err(e) => {
                let first = failed(e);
                self.rest(placement, serialized, first)
            }
        }
    }
}

impl<V: QueryValues + ?Sized> Future for Execute<'_, V> {
    type Output = Result<QueryResult, Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let call = &this.call;
        loop {
            match &mut this.state {
                State::Start => {
                    this.started = call.session.latency_start();
                    call.start(&mut this.state);
                }
                State::Acquiring { wait, .. } => {
                    let acquired = ready!(wait.poll_stream(cx));
                    let State::Acquiring {
                        wait,
                        index,
                        placement,
                        serialized,
                    } = std::mem::replace(&mut this.state, State::Done)
                    else {
                        unreachable!("matched above");
                    };
                    this.state = call.acquired(acquired, wait, index, placement, serialized);
                }
                State::Waiting { pending, .. } => {
                    let answer = ready!(pending.poll_answer(cx));
                    // Read in place: the state is moved out (176 bytes) only on the way to
                    // the general path.
                    let conn = pending.connection();
                    let result = match answer {
                        Ok(frame) => call.session.execute_answer(conn, call.prepared, &frame),
                        Err(e) => Err(Error::from_request(conn.addr(), e)),
                    };
                    let plain = match &result {
                        Ok(r) => !matches!(r.body, ResultBody::SchemaChange(_)),
                        Err(_) => false,
                    };
                    if plain && !forgotten(&result) {
                        this.state = State::Done;
                        call.session.count(&result, 0);
                        call.session.latency_end(this.started);
                        if call.partial(&result) {
                            return Poll::Ready(paged_answer(result));
                        }
                        return Poll::Ready(result);
                    }
                    let State::Waiting {
                        pending,
                        index,
                        placement,
                        serialized,
                    } = std::mem::replace(&mut this.state, State::Done)
                    else {
                        unreachable!("matched above");
                    };
                    let first = FirstAttempt {
                        index,
                        conn: pending.connection().clone(),
                        result,
                    };
                    this.state = call.rest(placement, serialized, first);
                }
                State::General(general) => {
                    let result = ready!(general.as_mut().poll(cx));
                    this.state = State::Done;
                    call.session.latency_end(this.started);
                    if call.partial(&result) {
                        return Poll::Ready(paged_answer(result));
                    }
                    return Poll::Ready(result);
                }
                State::Done => panic!("Session::execute_with polled after completion"),
            }
        }
    }
}
