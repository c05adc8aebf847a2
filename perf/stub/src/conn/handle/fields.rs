//! An EXECUTE's fields read straight from its body, without decoding it and without trusting
//! a length: its prepared id, `skip_metadata` and its first bound value (the hot path's).

use doppio_proto::ProtocolVersion;

/// The prepared id of an EXECUTE and the offset of its flags (`[short bytes id]`, in v5
/// `[short bytes result_metadata_id]`, then `[short consistency]`).
fn execute_id(body: &[u8], version: ProtocolVersion) -> Option<(&[u8], usize)> {
    let short = |at: usize| -> Option<usize> {
        Some(usize::from(u16::from_be_bytes([
            *body.get(at)?,
            *body.get(at + 1)?,
        ])))
    };
    let len = short(0)?;
    let id = body.get(2..2 + len)?;
    let mut at = 2 + len;
    if version.has_v5_fields() {
        at += 2 + short(at)?;
    }
    Some((id, at + 2))
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

/// The EXECUTE fields the fast path needs: the prepared id and `skip_metadata`.
pub(super) fn execute_head(body: &[u8], version: ProtocolVersion) -> Option<(&[u8], bool)> {
    let (id, at) = execute_id(body, version)?;
    let (flags, _) = query_flags(body, at, version)?;
    Some((id, flags & 0x02 != 0))
}

/// The first bound value of an EXECUTE (`[short bytes id]`, in v5 `[short bytes
/// result_metadata_id]`, `[short consistency][flags][short n][value...]`, each value `[int
/// length][bytes]`, after its `[string name]` when flag 0x40 says values are named); `None`
/// when it has none or is malformed.
pub(super) fn execute_first_value(body: &[u8], version: ProtocolVersion) -> Option<&[u8]> {
    let (_, at) = execute_id(body, version)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use doppio_proto::ProtocolVersion::{V4, V5};

    #[test]
    fn the_execute_head_is_read_without_trusting_lengths() {
        let body = [0, 2, 0xab, 0xcd, 0, 1, 0x02, 0, 0];
        assert_eq!(execute_head(&body, V4), Some((&[0xab, 0xcd][..], true)));
        assert_eq!(
            execute_head(&[0, 9, 1], V4),
            None,
            "an id longer than the body"
        );
        assert_eq!(execute_head(&[0, 1, 7, 0], V4), None, "no flags byte");
        assert_eq!(execute_head(&[], V4), None);
    }

    #[test]
    fn the_first_value_of_an_execute_is_read_without_trusting_lengths() {
        // id [ab], consistency ONE, flags VALUES, 2 values: [00 07] and [ff].
        let body = [
            0, 1, 0xab, 0, 1, 0x01, 0, 2, 0, 0, 0, 2, 0, 7, 0, 0, 0, 1, 0xff,
        ];
        assert_eq!(execute_first_value(&body, V4), Some(&[0, 7][..]));
        // Named values: the name is skipped.
        let named = [0, 1, 0xab, 0, 1, 0x41, 0, 1, 0, 1, b'k', 0, 0, 0, 1, 9];
        assert_eq!(execute_first_value(&named, V4), Some(&[9][..]));
        assert_eq!(
            execute_first_value(&[0, 1, 0xab, 0, 1, 0x00], V4),
            None,
            "no values"
        );
        assert_eq!(
            execute_first_value(&body[..13], V4),
            None,
            "a value past the body"
        );
        let null = [0, 1, 0xab, 0, 1, 0x01, 0, 1, 0xff, 0xff, 0xff, 0xff];
        assert_eq!(execute_first_value(&null, V4), None, "a null value");
    }

    #[test]
    fn v5_executes_are_read_past_their_result_metadata_id_and_int_flags() {
        // id [ab], result metadata id [cd ef], consistency ONE, flags SKIP_METADATA|VALUES
        // as an [int], 1 value [07].
        let body = [
            0, 1, 0xab, 0, 2, 0xcd, 0xef, 0, 1, 0, 0, 0, 0x03, 0, 1, 0, 0, 0, 1, 7,
        ];
        assert_eq!(execute_head(&body, V5), Some((&[0xab][..], true)));
        assert_eq!(execute_first_value(&body, V5), Some(&[7][..]));
        // Read as v4, the same bytes mean something else, and nothing is trusted.
        assert_ne!(execute_head(&body, V4), Some((&[0xab][..], true)));
        assert_eq!(
            execute_head(&body[..6], V5),
            None,
            "a result id past the body"
        );
        assert_eq!(execute_head(&body[..11], V5), None, "flags cut short");
        assert_eq!(
            execute_first_value(&body[..19], V5),
            None,
            "a value past the body"
        );
    }
}
