//! What one attempt of a request needs on every path (the general one of `request` and
//! `plan`, and the EXECUTE future of `execute`): the attempt the caller already made
//! ([`FirstAttempt`]), whether an EXECUTE is written from its template, decoding an
//! answer in place, and whether the node had forgotten the statement.

use bytes::BytesMut;
use doppio_proto::frame::Frame;
use doppio_proto::metadata::ColumnSpec;
use doppio_proto::request::{ExecuteTemplate, PageRequest};
use doppio_proto::response::{ErrorCode, ResponseFrame};
use doppio_proto::values::QueryValues;
use doppio_proto::ProtoError;

use super::config::StatementOptions;
use super::prepared::PreparedStatement;
use crate::connection::Connection;
use crate::error::Error;
use crate::result::QueryResult;
use crate::routing::ring::NodeIndex;

/// The first attempt of a request, already made by the caller: on node `index` of the
/// placement's view, over `conn`, with `result`.
pub(super) struct FirstAttempt {
    pub(super) index: NodeIndex,
    pub(super) conn: Connection,
    pub(super) result: Result<QueryResult, Error>,
}

/// Whether an EXECUTE of `prepared` with `options` on `conn` is written from the
/// statement's template: default options but for idempotence and the page (its size and
/// paging state: a page of a paged read, [`own_page`]), no body compression, and a template
/// in the connection's protocol version.
pub(super) fn templated(
    prepared: &PreparedStatement,
    options: &StatementOptions<'_>,
    conn: &Connection,
) -> bool {
    // Every field named, so that a new one must be placed here: the settings the template
    // was not written with send the request the general way.
    let StatementOptions {
        consistency,
        serial_consistency,
        timestamp,
        page_size: _,
        paging_state: _,
        tracing,
        idempotent: _,
        timeout,
        retry_policy,
        speculative,
    } = *options;
    let defaults = consistency.is_none()
        && serial_consistency.is_none()
        && timestamp.is_none()
        && !tracing
        && timeout.is_none()
        && retry_policy.is_none()
        && speculative.is_none();
    defaults && template_fits(prepared, conn)
}

/// Whether `prepared`'s template can be sent on `conn`: no body compression, and a template
/// in the connection's protocol version, with a result metadata id exactly where the
/// connection carries one (v5, or v4 with ScyllaDB's extension on) and a tablet version
/// block exactly where it reads one (ScyllaDB's tablets routing v2). The settings are
/// [`templated`]'s other half.
#[inline]
pub(super) fn template_fits(prepared: &PreparedStatement, conn: &Connection) -> bool {
    conn.compression().is_none()
        && prepared.inner.template.borrow().fits(
            conn.version(),
            conn.metadata_ids(),
            conn.extensions().tablets_routing_v2,
        )
}

/// The page an EXECUTE with `options` asks for when it is not the template's own (a page
/// size other than the session's `default_page_size`, which the template was written with,
/// or a paging state); `None`: the template's.
#[inline]
pub(super) fn own_page<'a>(
    options: &StatementOptions<'a>,
    default_page_size: Option<i32>,
) -> Option<PageRequest<'a>> {
    own_page_of(options.page_size, options.paging_state, default_page_size)
}

/// [`own_page`] of a request asking for `page_size` from `paging_state`.
#[inline]
pub(super) fn own_page_of(
    page_size: Option<i32>,
    paging_state: Option<&[u8]>,
    default_page_size: Option<i32>,
) -> Option<PageRequest<'_>> {
    let size = page_size_of(page_size, default_page_size);
    if paging_state.is_none() && size == default_page_size.filter(|p| *p > 0) {
        return None;
    }
    Some(PageRequest {
        page_size: size,
        paging_state,
    })
}

/// The page size a request with `options` asks for: its own, else the session's
/// `default_page_size`; 0 or less is unpaged (`None`).
#[inline]
pub(super) fn page_size(
    options: &StatementOptions<'_>,
    default_page_size: Option<i32>,
) -> Option<i32> {
    page_size_of(options.page_size, default_page_size)
}

/// [`page_size`] of a request that asks for `page_size`.
#[inline]
fn page_size_of(page_size: Option<i32>, default_page_size: Option<i32>) -> Option<i32> {
    page_size.or(default_page_size).filter(|p| *p > 0)
}

/// Writes an EXECUTE from `template` on `stream`, with `page` in place of the template's
/// when given ([`own_page`]), ending with tablet version block `block` when the template
/// carries one (tablets routing v2: one byte written in place, nothing more).
#[inline]
pub(super) fn encode_templated(
    template: &ExecuteTemplate,
    page: Option<PageRequest<'_>>,
    block: u8,
    buf: &mut BytesMut,
    stream: i16,
    values: &(impl QueryValues + ?Sized),
    columns: Option<&[ColumnSpec]>,
) -> Result<(), ProtoError> {
    match page {
        None => template.encode(buf, stream, values, columns)?,
        Some(page) => template.encode_page(buf, stream, values, columns, page)?,
    }
    template.set_tablet_block(buf, block);
    Ok(())
}

/// The answer `frame` to a request on `conn`, decoded in place (not through
/// `Connection::decode`'s result: one copy of the decoded frame less per request); an
/// undecodable answer closes the connection.
#[inline]
pub(super) fn decode_answer(conn: &Connection, frame: &Frame) -> Result<ResponseFrame, Error> {
    ResponseFrame::decode_with(
        frame,
        None,
        conn.config().max_frame_body,
        conn.metadata_ids(),
    )
    .map_err(|e| Error::from_request(conn.addr(), conn.undecodable(frame, e)))
}

/// `result` as the answer of an unpaged request: refused if the node sent only a page of it
/// (a paging state), so that no call hands back part of a result as the whole.
#[inline]
pub(super) fn whole(result: Result<QueryResult, Error>) -> Result<QueryResult, Error> {
    if partial(&result) {
        return paged_answer(result);
    }
    result
}

/// Whether `result` is one page of a result (the node sent a paging state): the test of
/// [`whole`], by reference, so that the common answer is not moved to be looked at.
#[inline]
pub(super) fn partial(result: &Result<QueryResult, Error>) -> bool {
    matches!(result, Ok(r) if r.paging_state().is_some())
}

/// The error of an unpaged request answered with one page only (`result`, [`partial`]).
#[cold]
#[inline(never)]
pub(super) fn paged_answer(result: Result<QueryResult, Error>) -> Result<QueryResult, Error> {
    match result {
        Ok(r) => Err(Error::Protocol {
            node: r.node,
            violation: Box::new(crate::error::Violation::PagedAnswer),
        }),
        other => other,
    }
}

/// Whether the node had forgotten the statement: UNPREPARED, or rows without metadata whose
/// prepared result columns are stale (the table changed since).
pub(super) fn forgotten(result: &Result<QueryResult, Error>) -> bool {
    match result {
        Err(e) => e.server_code() == Some(ErrorCode::Unprepared),
        Ok(r) => r.stale_columns(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(paging_state: Option<&'static [u8]>) -> Result<QueryResult, Error> {
        use doppio_proto::metadata::RowsMetadata;
        use doppio_proto::response::ResultBody;
        use doppio_proto::rows::Rows;
        Ok(QueryResult::new(crate::result::ResultParts {
            node: "127.0.0.1:9042".parse().expect("an address"),
            body: ResultBody::Rows(Rows {
                metadata: RowsMetadata {
                    paging_state: paging_state.map(bytes::Bytes::from_static),
                    ..RowsMetadata::default()
                },
                rows_count: 0,
                content: bytes::Bytes::new(),
            }),
            ..crate::result::ResultParts::default()
        }))
    }

    /// An unpaged request's answer is refused when it says more rows follow; a whole
    /// result and an error pass as they are.
    #[test]
    fn an_unpaged_answer_with_a_paging_state_is_refused() {
        let err = whole(rows(Some(b"more"))).expect_err("a page is not the whole result");
        assert!(
            matches!(&err, Error::Protocol { violation, .. }
                if matches!(**violation, crate::error::Violation::PagedAnswer)),
            "{err:?}"
        );
        assert!(whole(rows(None)).is_ok());
        assert!(matches!(
            whole(Err(Error::Closed("x".into()))),
            Err(Error::Closed(_))
        ));
    }

    /// A page of a paged read keeps the template; its size is its own or the session's,
    /// 0 or less means unpaged, and the session's size without a state is the template's page.
    #[test]
    fn a_page_of_its_own_is_the_options_size_or_the_sessions_with_its_state() {
        let state = [1u8, 2, 3];
        let own = |page_size, paging_state, default| {
            own_page(
                &StatementOptions {
                    page_size,
                    paging_state,
                    idempotent: true,
                    ..StatementOptions::DEFAULT
                },
                default,
            )
        };
        assert_eq!(own(None, None, Some(5000)), None, "the template's own page");
        assert_eq!(
            own(Some(10), None, Some(5000)),
            Some(PageRequest {
                page_size: Some(10),
                paging_state: None
            })
        );
        assert_eq!(
            own(None, Some(&state[..]), Some(5000)),
            Some(PageRequest {
                page_size: Some(5000),
                paging_state: Some(&state[..])
            }),
            "the session's size with a state"
        );
        for unpaged in [Some(0), Some(-1)] {
            assert_eq!(
                own(unpaged, Some(&state[..]), Some(5000)).map(|p| p.page_size),
                Some(None)
            );
        }
        assert_eq!(
            own(None, Some(&state[..]), None).map(|p| p.page_size),
            Some(None)
        );
        // The template's size asked for by name is the template's page; an unpaged request
        // on a session whose default is unpaged too.
        assert_eq!(own(Some(5000), None, Some(5000)), None);
        assert_eq!(own(Some(0), None, None), None);
        assert_eq!(own(Some(0), None, Some(0)), None);
        assert_eq!(
            own(Some(0), None, Some(5000)),
            Some(PageRequest {
                page_size: None,
                paging_state: None
            }),
            "unpaged on a paged session"
        );
    }
}
