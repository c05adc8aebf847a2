//! An EXECUTE's fields read straight from its body, without decoding it and without trusting
//! a length: its prepared id, its result metadata id (where the connection carries one),
//! `skip_metadata`, its first bound value (the hot path's) and, on a connection with tablets
//! routing v2, the tablet version block after its parameters ([`split_tablet_block`]).

use doppio_proto::{MetadataIds, ProtocolVersion};

/// The fields the fast path answers an EXECUTE by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ExecuteHead<'a> {
    /// The prepared id.
    pub(super) id: &'a [u8],
    /// The result metadata id the client holds, where the connection carries one (v5, or
    /// v4 with ScyllaDB's `SCYLLA_USE_METADATA_ID` on).
    pub(super) result_metadata_id: Option<&'a [u8]>,
    /// The query flags' `skip_metadata`.
    pub(super) skip_metadata: bool,
}

/// An EXECUTE's prepared id, its result metadata id (where carried) and the offset of its
/// flags.
type Ids<'a> = (&'a [u8], Option<&'a [u8]>, usize);

/// The prepared id and result metadata id of an EXECUTE, and the offset of its flags
/// (`[short bytes id]`, where ids are carried `[short bytes result_metadata_id]`, then
/// `[short consistency]`).
fn execute_ids(body: &[u8], version: ProtocolVersion, ids: MetadataIds) -> Option<Ids<'_>> {
    let short = |at: usize| -> Option<usize> {
        Some(usize::from(u16::from_be_bytes([
            *body.get(at)?,
            *body.get(at + 1)?,
        ])))
    };
    let len = short(0)?;
    let id = body.get(2..2 + len)?;
    let mut at = 2 + len;
    let mut result_metadata_id = None;
    if version.has_metadata_ids(ids) {
        let rlen = short(at)?;
        result_metadata_id = Some(body.get(at + 2..at + 2 + rlen)?);
        at += 2 + rlen;
    }
    Some((id, result_metadata_id, at + 2))
}

/// The query flags at `at` (`[byte]` in v4, `[int]` in v5) and the offset after them.
fn query_flags(body: &[u8], at: usize, version: ProtocolVersion) -> Option<(u32, usize)> {
    if version.has_int_flags() {
        let b = body.get(at..at + 4)?;
        Some((u32::from_be_bytes([b[0], b[1], b[2], b[3]]), at + 4))
    } else {
        Some((u32::from(*body.get(at)?), at + 1))
    }
}

/// The EXECUTE fields the fast path needs: the ids and `skip_metadata`.
pub(super) fn execute_head(
    body: &[u8],
    version: ProtocolVersion,
    ids: MetadataIds,
) -> Option<ExecuteHead<'_>> {
    let (id, result_metadata_id, at) = execute_ids(body, version, ids)?;
    let (flags, _) = query_flags(body, at, version)?;
    Some(ExecuteHead {
        id,
        result_metadata_id,
        skip_metadata: flags & 0x02 != 0,
    })
}

/// The first bound value of an EXECUTE (`[short bytes id]`, where ids are carried `[short
/// bytes result_metadata_id]`, `[short consistency][flags][short n][value...]`, each value
/// `[int length][bytes]`, after its `[string name]` when flag 0x40 says values are named);
/// `None` when it has none or is malformed.
pub(super) fn execute_first_value(
    body: &[u8],
    version: ProtocolVersion,
    ids: MetadataIds,
) -> Option<&[u8]> {
    let (_, _, at) = execute_ids(body, version, ids)?;
    let (flags, mut at) = query_flags(body, at, version)?;
    if flags & 0x01 == 0 || u16::from_be_bytes([*body.get(at)?, *body.get(at + 1)?]) == 0 {
        return None;
    }
    at += 2;
    if flags & 0x40 != 0 {
        let name = usize::from(u16::from_be_bytes([*body.get(at)?, *body.get(at + 1)?]));
        at += 2 + name;
    }
    let n = i32::from_be_bytes(body.get(at..at + 4)?.try_into().ok()?);
    let n = usize::try_from(n).ok()?;
    body.get(at + 4..at + 4 + n)
}

/// Why an EXECUTE on a connection with tablets routing v2 has no readable tablet version
/// block (answered with a PROTOCOL_ERROR naming it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum TabletBlockError {
    /// The body ends with its parameters: the block is missing.
    #[error(
        "EXECUTE on a TABLETS_ROUTING_V2 connection lacks its tablet version block (one \
         byte after the parameters)"
    )]
    Missing,
    /// More than the one byte follows the parameters.
    #[error("EXECUTE has {0} bytes after its parameters; TABLETS_ROUTING_V2 appends one")]
    Trailing(usize),
    /// The parameters themselves cannot be read to their end.
    #[error("EXECUTE parameters cut short or malformed")]
    Malformed,
}

/// The offset after a `[short]`-length field at `at` (`[string]`, `[short bytes]`).
fn skip_short(body: &[u8], at: usize) -> Option<usize> {
    let len = usize::from(u16::from_be_bytes([*body.get(at)?, *body.get(at + 1)?]));
    let end = at + 2 + len;
    (end <= body.len()).then_some(end)
}

/// The offset after an `[int]`-length field at `at` (`[bytes]`, `[value]`: -1 null, -2 unset,
/// other negatives refused).
fn skip_int(body: &[u8], at: usize) -> Option<usize> {
    let n = i32::from_be_bytes(body.get(at..at + 4)?.try_into().ok()?);
    let end = match n {
        -2 | -1 => at + 4,
        n => at + 4 + usize::try_from(n).ok()?,
    };
    (end <= body.len()).then_some(end)
}

/// The offset where an EXECUTE's parameters end (`payload`: the body starts with a custom
/// payload, `[bytes map]`); `None` when they cannot be read to their end.
fn execute_params_end(
    body: &[u8],
    version: ProtocolVersion,
    ids: MetadataIds,
    payload: bool,
) -> Option<usize> {
    let mut from = 0;
    if payload {
        let n = u16::from_be_bytes([*body.first()?, *body.get(1)?]);
        from = 2;
        for _ in 0..n {
            from = skip_int(body, skip_short(body, from)?)?;
        }
    }
    let rest = body.get(from..)?;
    let (_, _, at) = execute_ids(rest, version, ids)?;
    let (flags, mut at) = query_flags(rest, at, version)?;
    if flags & 0x01 != 0 {
        let n = u16::from_be_bytes([*rest.get(at)?, *rest.get(at + 1)?]);
        at += 2;
        for _ in 0..n {
            if flags & 0x40 != 0 {
                at = skip_short(rest, at)?;
            }
            at = skip_int(rest, at)?;
        }
    }
    // Page size, paging state, serial consistency, timestamp, and v5's keyspace and "now".
    if flags & 0x04 != 0 {
        at += 4;
    }
    if flags & 0x08 != 0 {
        at = skip_int(rest, at)?;
    }
    if flags & 0x10 != 0 {
        at += 2;
    }
    if flags & 0x20 != 0 {
        at += 8;
    }
    if version.has_int_flags() {
        if flags & 0x80 != 0 {
            at = skip_short(rest, at)?;
        }
        if flags & 0x100 != 0 {
            at += 4;
        }
    }
    (at <= rest.len()).then_some(from + at)
}

/// An EXECUTE body on a connection with tablets routing v2 split into the body without its
/// tablet version block and the block (the one byte after the parameters), or why it has
/// none (never a panic, whatever the bytes).
pub(crate) fn split_tablet_block(
    body: &[u8],
    version: ProtocolVersion,
    ids: MetadataIds,
    payload: bool,
) -> Result<(&[u8], u8), TabletBlockError> {
    let end = execute_params_end(body, version, ids, payload).ok_or(TabletBlockError::Malformed)?;
    match body.len() - end {
        0 => Err(TabletBlockError::Missing),
        1 => Ok((&body[..end], body[end])),
        n => Err(TabletBlockError::Trailing(n)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use doppio_proto::MetadataIds::{ByVersion, Negotiated};
    use doppio_proto::ProtocolVersion::{V4, V5};

    /// An EXECUTE's head as a tuple: (id, result metadata id, skip_metadata).
    type Head<'a> = (&'a [u8], Option<&'a [u8]>, bool);

    /// The head of `body` as a tuple.
    fn head(body: &[u8], version: ProtocolVersion, ids: MetadataIds) -> Option<Head<'_>> {
        execute_head(body, version, ids).map(|h| (h.id, h.result_metadata_id, h.skip_metadata))
    }

    #[test]
    fn the_execute_head_is_read_without_trusting_lengths() {
        let body = [0, 2, 0xab, 0xcd, 0, 1, 0x02, 0, 0];
        assert_eq!(
            head(&body, V4, ByVersion),
            Some((&[0xab, 0xcd][..], None, true))
        );
        assert_eq!(
            head(&[0, 9, 1], V4, ByVersion),
            None,
            "an id longer than the body"
        );
        assert_eq!(head(&[0, 1, 7, 0], V4, ByVersion), None, "no flags byte");
        assert_eq!(head(&[], V4, ByVersion), None);
    }

    #[test]
    fn the_first_value_of_an_execute_is_read_without_trusting_lengths() {
        // id [ab], consistency ONE, flags VALUES, 2 values: [00 07] and [ff].
        let body = [
            0, 1, 0xab, 0, 1, 0x01, 0, 2, 0, 0, 0, 2, 0, 7, 0, 0, 0, 1, 0xff,
        ];
        assert_eq!(execute_first_value(&body, V4, ByVersion), Some(&[0, 7][..]));
        // Named values: the name is skipped.
        let named = [0, 1, 0xab, 0, 1, 0x41, 0, 1, 0, 1, b'k', 0, 0, 0, 1, 9];
        assert_eq!(execute_first_value(&named, V4, ByVersion), Some(&[9][..]));
        assert_eq!(
            execute_first_value(&[0, 1, 0xab, 0, 1, 0x00], V4, ByVersion),
            None,
            "no values"
        );
        assert_eq!(
            execute_first_value(&body[..13], V4, ByVersion),
            None,
            "a value past the body"
        );
        let null = [0, 1, 0xab, 0, 1, 0x01, 0, 1, 0xff, 0xff, 0xff, 0xff];
        assert_eq!(
            execute_first_value(&null, V4, ByVersion),
            None,
            "a null value"
        );
    }

    #[test]
    fn v5_executes_are_read_past_their_result_metadata_id_and_int_flags() {
        // id [ab], result metadata id [cd ef], consistency ONE, flags SKIP_METADATA|VALUES
        // as an [int], 1 value [07].
        let body = [
            0, 1, 0xab, 0, 2, 0xcd, 0xef, 0, 1, 0, 0, 0, 0x03, 0, 1, 0, 0, 0, 1, 7,
        ];
        assert_eq!(
            head(&body, V5, ByVersion),
            Some((&[0xab][..], Some(&[0xcd, 0xef][..]), true))
        );
        assert_eq!(execute_first_value(&body, V5, ByVersion), Some(&[7][..]));
        // Read as v4, the same bytes mean something else, and nothing is trusted.
        assert_ne!(
            head(&body, V4, ByVersion),
            Some((&[0xab][..], Some(&[0xcd, 0xef][..]), true))
        );
        assert_eq!(
            head(&body[..6], V5, ByVersion),
            None,
            "a result id past the body"
        );
        assert_eq!(head(&body[..11], V5, ByVersion), None, "flags cut short");
        assert_eq!(
            execute_first_value(&body[..19], V5, ByVersion),
            None,
            "a value past the body"
        );
    }

    #[test]
    fn v4_executes_with_scylla_s_metadata_ids_are_read_past_the_id() {
        // id [ab], result metadata id [cd ef], consistency ONE, flags SKIP_METADATA|VALUES
        // as v4's [byte], 1 value [07].
        let body = [
            0, 1, 0xab, 0, 2, 0xcd, 0xef, 0, 1, 0x03, 0, 1, 0, 0, 0, 1, 7,
        ];
        assert_eq!(
            head(&body, V4, Negotiated),
            Some((&[0xab][..], Some(&[0xcd, 0xef][..]), true))
        );
        assert_eq!(execute_first_value(&body, V4, Negotiated), Some(&[7][..]));
        // Not negotiated: the id is read as the consistency, the flags are wrong.
        assert_ne!(
            head(&body, V4, ByVersion).map(|h| h.1),
            Some(Some(&[0xcd, 0xef][..]))
        );
        for cut in 0..10 {
            assert_eq!(head(&body[..cut], V4, Negotiated), None, "cut at {cut}");
        }
        assert_eq!(
            execute_first_value(&body[..16], V4, Negotiated),
            None,
            "a value past the body"
        );
    }

    /// On a v2 connection the byte after the parameters is the block, found past every
    /// optional field; a body without it is `Missing`, one with more `Trailing`, and no cut
    /// of the body panics.
    #[test]
    fn the_tablet_block_is_read_after_every_parameter_and_its_absence_is_an_error() {
        // id [ab], consistency ONE, flags VALUES|PAGE_SIZE|PAGING_STATE|SERIAL|TIMESTAMP,
        // 2 values ([07], null), page size 100, paging state [ee], serial, timestamp; block.
        let params = [
            &[0, 1, 0xab, 0, 1, 0x3D, 0, 2][..],
            &[0, 0, 0, 1, 7, 0xff, 0xff, 0xff, 0xff],
            &[0, 0, 0, 100],
            &[0, 0, 0, 1, 0xee],
            &[0, 8],
            &[0, 0, 0, 0, 0, 0, 0, 42],
        ]
        .concat();
        let body = [&params[..], &[0x5C]].concat();
        assert_eq!(
            split_tablet_block(&body, V4, ByVersion, false),
            Ok((&params[..], 0x5C))
        );
        assert_eq!(
            split_tablet_block(&params, V4, ByVersion, false),
            Err(TabletBlockError::Missing)
        );
        let two = [&body[..], &[0]].concat();
        assert_eq!(
            split_tablet_block(&two, V4, ByVersion, false),
            Err(TabletBlockError::Trailing(2))
        );
        for cut in 0..params.len() {
            assert!(
                split_tablet_block(&params[..cut], V4, ByVersion, false).is_err(),
                "cut at {cut}"
            );
        }
        // Named values, v5's int flags with a result metadata id, keyspace and "now".
        let v5 = [
            &[0, 1, 0xab, 0, 1, 0xcd, 0, 1][..],
            &[0, 0, 0x01, 0xC1],
            &[0, 1, 0, 1, b'k', 0, 0, 0, 1, 9],
            &[0, 2, b'k', b's'],
            &[0, 0, 0, 5],
            &[0x0F],
        ]
        .concat();
        let (rest, block) = split_tablet_block(&v5, V5, ByVersion, false).unwrap();
        assert_eq!((rest.len(), block), (v5.len() - 1, 0x0F));
        // A custom payload before the EXECUTE: one entry "p" -> [01].
        let with_payload = [&[0, 1, 0, 1, b'p', 0, 0, 0, 1, 1][..], &body].concat();
        assert_eq!(
            split_tablet_block(&with_payload, V4, ByVersion, true).map(|(_, b)| b),
            Ok(0x5C)
        );
        // A value length below -2 is malformed, not a skip backwards.
        let bad = [0, 1, 0xab, 0, 1, 0x01, 0, 1, 0xff, 0xff, 0xff, 0xf0, 0x5C];
        assert_eq!(
            split_tablet_block(&bad, V4, ByVersion, false),
            Err(TabletBlockError::Malformed)
        );
    }
}
