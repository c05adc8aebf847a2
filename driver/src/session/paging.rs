//! A stream of result pages that asks for page N+1 while the caller reads page N.
//!
//! [`PageStream::next_page`] returns a page and, before returning it, puts the request for
//! the following page on the wire: it polls that request's future once, which encodes the
//! frame into the connection's write buffer and parks it on its stream id. The answer is
//! parsed by the connection's reader as soon as it arrives and waits in the in-flight table
//! until the next call collects it. No task is spawned; one boxed future per page (not per
//! row or request of the hot path).
//!
//! Invariants:
//! - At most one page request is in flight per stream; pages come back in order, each once.
//! - Dropping the stream mid-way drops the pending request: its stream id becomes an orphan
//!   until the late answer arrives, as for any abandoned request.

use std::future::Future;
use std::pin::Pin;

use bytes::Bytes;
use doppio_proto::values::QueryValues;

use super::config::StatementOptions;
use super::handle::Session;
use super::prepared::PreparedStatement;
use crate::error::Error;
use crate::result::QueryResult;

/// What a [`PageStream`] runs.
#[derive(Debug, Clone, Copy)]
pub enum Statement<'a> {
    /// Unprepared CQL text.
    Query(&'a str),
    /// A prepared statement.
    Prepared(&'a PreparedStatement),
}

type PageFuture<'a> = Pin<Box<dyn Future<Output = Result<QueryResult, Error>> + 'a>>;

/// The pages of one statement's result, fetched one ahead. Made by
/// [`Session::query_pages`] and [`Session::execute_pages`].
pub struct PageStream<'a, V: ?Sized> {
    session: Session,
    statement: Statement<'a>,
    values: &'a V,
    options: StatementOptions<'a>,
    /// The request for the next page, already sent; `None` once the last page was returned.
    next: Option<PageFuture<'a>>,
    pages: u64,
}

impl<V: ?Sized> std::fmt::Debug for PageStream<'_, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageStream")
            .field("statement", &self.statement)
            .field("pages", &self.pages)
            .field("done", &self.next.is_none())
            .finish()
    }
}

impl<'a, V: QueryValues + ?Sized> PageStream<'a, V> {
    pub(super) fn new(
        session: Session,
        statement: Statement<'a>,
        values: &'a V,
        options: StatementOptions<'a>,
    ) -> Self {
        let mut stream = Self {
            session,
            statement,
            values,
            options,
            next: None,
            pages: 0,
        };
        let first = options.paging_state.map(Bytes::copy_from_slice);
        stream.next = Some(stream.fetch(first));
        stream
    }

    /// Pages returned so far.
    pub fn pages(&self) -> u64 {
        self.pages
    }

    /// The next page, or `None` after the last one. The request for the page after it is
    /// sent before this returns, so it travels while the caller reads this one. An error
    /// ends the stream.
    pub async fn next_page(&mut self) -> Result<Option<QueryResult>, Error> {
        let Some(pending) = self.next.take() else {
            return Ok(None);
        };
        let page = pending.await?;
        self.pages += 1;
        if let Some(state) = page.paging_state() {
            let mut next = self.fetch(Some(state.clone()));
            // One poll puts the request on the wire (or finishes it, if it fails at once).
            if let Some(done) = futures_lite::future::poll_once(&mut next).await {
                next = Box::pin(std::future::ready(done));
            }
            self.next = Some(next);
        }
        Ok(Some(page))
    }

    fn fetch(&self, paging_state: Option<Bytes>) -> PageFuture<'a> {
        let session = self.session.clone();
        let statement = self.statement;
        let values = self.values;
        let options = self.options;
        Box::pin(async move {
            let options = StatementOptions {
                paging_state: paging_state.as_deref(),
                ..options
            };
            match statement {
                Statement::Query(cql) => session.query_with(cql, values, &options).await,
                Statement::Prepared(p) => session.execute_with(p, values, &options).await,
            }
        })
    }
}
