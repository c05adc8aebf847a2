//! All the pages of a result, each asked for while the caller reads the one before:
//! [`PageStream`] (pages) and [`RowStream`] (typed rows across pages), made by
//! `Session::query_iter` and `Session::execute_iter`.
//!
//! When a page arrives and says more follow, the request for the next one is put on the
//! wire before the page is handed out: its future is polled once, which encodes the frame
//! into the connection's write buffer and parks it on its stream id. The answer is parsed
//! by the connection's reader as soon as it arrives and waits in the in-flight table until
//! the caller asks for it. No task is spawned; one boxed future per page (not per row or
//! request of the hot path).
//!
//! Invariants:
//! - At most one page request is in flight per stream; pages come back in order, each once.
//! - An error ends the stream: it is returned once, then the stream is done.
//! - Dropping the stream mid-way drops the pending request: its stream id becomes an orphan
//!   until the late answer arrives, as for any abandoned request.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{ready, Context, Poll};

use doppio_proto::deserialize::FromRow;
use doppio_proto::values::QueryValues;

use super::handle::Session;
use super::prepared::PreparedStatement;
use super::statement::{Page, Paging, PagingState, Statement};
use crate::error::Error;
use crate::result::QueryResult;

/// What a [`PageStream`] runs.
#[derive(Debug, Clone)]
enum Source<'a> {
    /// Unprepared CQL with its settings (shared by the stream's page requests).
    Query(Rc<Statement>),
    /// A prepared statement with its settings.
    Prepared(&'a PreparedStatement),
}

type PageFuture<'a> = Pin<Box<dyn Future<Output = Result<QueryResult, Error>> + 'a>>;

/// The pages of one statement's result, each fetched while the caller reads the one before.
/// Made by [`Session::query_iter`] and [`Session::execute_iter`]; its pages are of the
/// statement's page size (or the session's). Read pages with [`PageStream::next_page`],
/// or rows of every page with [`PageStream::rows`]. It is also a [`futures_lite::Stream`]
/// of pages.
pub struct PageStream<'a, V: ?Sized> {
    session: Session,
    source: Source<'a>,
    values: &'a V,
    /// The request for the next page, already sent; `None` once the last page was returned
    /// or an error ended the stream.
    next: Option<PageFuture<'a>>,
    pages: u64,
}

impl<V: ?Sized> std::fmt::Debug for PageStream<'_, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageStream")
            .field("source", &self.source)
            .field("pages", &self.pages)
            .field("done", &self.next.is_none())
            .finish()
    }
}

impl<'a, V: QueryValues + ?Sized> PageStream<'a, V> {
    fn new(session: Session, source: Source<'a>, values: &'a V, from: PagingState) -> Self {
        let mut stream = Self {
            session,
            source,
            values,
            next: None,
            pages: 0,
        };
        stream.next = Some(stream.fetch(from));
        stream
    }

    /// The pages of unprepared `statement` from `from`.
    pub(super) fn query(
        session: Session,
        statement: Statement,
        values: &'a V,
        from: PagingState,
    ) -> Self {
        Self::new(session, Source::Query(Rc::new(statement)), values, from)
    }

    /// The pages of `prepared` from `from`.
    pub(super) fn prepared(
        session: Session,
        prepared: &'a PreparedStatement,
        values: &'a V,
        from: PagingState,
    ) -> Self {
        Self::new(session, Source::Prepared(prepared), values, from)
    }

    /// The stream resumed from `from`, a state kept from a page of the same statement and
    /// values (an earlier stream's, or [`Page::next`]): its first page is the one that
    /// state points to. The request for the page this stream would have read next is
    /// dropped unsent (nothing is sent before the first poll).
    pub fn resume_from(mut self, from: PagingState) -> Self {
        self.next = Some(self.fetch(from));
        self
    }

    /// Pages returned so far.
    pub fn pages(&self) -> u64 {
        self.pages
    }

    /// The next page, or `None` after the last one. The request for the page after it is
    /// sent before this returns, so it travels while the caller reads this one. An error
    /// ends the stream.
    pub async fn next_page(&mut self) -> Result<Option<Page>, Error> {
        std::future::poll_fn(|cx| self.poll_page(cx)).await
    }

    /// The rows of every page from here on, read as `T`, the next page asked for while the
    /// rows of this one are read.
    pub fn rows<T: for<'r> FromRow<'r>>(self) -> RowStream<'a, V, T> {
        RowStream {
            pages: self,
            rows: VecDeque::new(),
        }
    }

    fn poll_page(&mut self, cx: &mut Context<'_>) -> Poll<Result<Option<Page>, Error>> {
        let Some(pending) = self.next.as_mut() else {
            return Poll::Ready(Ok(None));
        };
        let answer = ready!(pending.as_mut().poll(cx));
        self.next = None;
        let page = Page::new(answer?);
        self.pages += 1;
        if let Some(state) = page.next() {
            let mut next = self.fetch(state);
            // One poll puts the request on the wire (or finishes it, if it fails at once).
            if let Poll::Ready(done) = next.as_mut().poll(cx) {
                next = Box::pin(std::future::ready(done));
            }
            self.next = Some(next);
        }
        Poll::Ready(Ok(Some(page)))
    }

    fn fetch(&self, from: PagingState) -> PageFuture<'a> {
        let session = self.session.clone();
        let source = self.source.clone();
        let values = self.values;
        Box::pin(async move {
            match &source {
                Source::Query(statement) => {
                    let options = statement.config().options(Paging::Page(&from));
                    session.query_with(statement.cql(), values, &options).await
                }
                Source::Prepared(p) => session.execute_with(p, values, Paging::Page(&from)).await,
            }
        })
    }
}

impl<V: QueryValues + ?Sized> futures_lite::Stream for PageStream<'_, V> {
    type Item = Result<Page, Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut().poll_page(cx).map(Result::transpose)
    }
}

/// The rows of a result across all its pages, read as `T`, the next page asked for while
/// the rows of this one are read: a [`futures_lite::Stream`] of `Result<T, Error>`. Made by
/// [`PageStream::rows`]. A page whose rows do not read as `T` ends the stream with the
/// error; one `Vec` of rows per page is allocated.
pub struct RowStream<'a, V: ?Sized, T> {
    pages: PageStream<'a, V>,
    rows: VecDeque<T>,
}

impl<V: ?Sized, T> std::fmt::Debug for RowStream<'_, V, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowStream")
            .field("pages", &self.pages)
            .field("rows_left_in_page", &self.rows.len())
            .finish()
    }
}

impl<V: QueryValues + ?Sized, T: for<'r> FromRow<'r>> RowStream<'_, V, T> {
    /// The next row, or `None` after the last one. An error ends the stream.
    pub async fn next_row(&mut self) -> Option<Result<T, Error>> {
        std::future::poll_fn(|cx| self.poll_row(cx)).await
    }

    /// Pages read so far.
    pub fn pages(&self) -> u64 {
        self.pages.pages()
    }

    fn poll_row(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<T, Error>>> {
        loop {
            if let Some(row) = self.rows.pop_front() {
                return Poll::Ready(Some(Ok(row)));
            }
            match ready!(self.pages.poll_page(cx)) {
                Ok(None) => return Poll::Ready(None),
                Err(e) => return Poll::Ready(Some(Err(e))),
                Ok(Some(page)) => match page.typed_rows::<T>() {
                    Ok(rows) => self.rows = rows.into(),
                    Err(e) => {
                        // The rows after it cannot be read as `T` either: the stream ends.
                        self.pages.next = None;
                        return Poll::Ready(Some(Err(e)));
                    }
                },
            }
        }
    }
}

/// A stream of rows of an `Unpin` type (every owned row type is).
impl<V: QueryValues + ?Sized, T: for<'r> FromRow<'r> + Unpin> futures_lite::Stream
    for RowStream<'_, V, T>
{
    type Item = Result<T, Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut().poll_row(cx)
    }
}
