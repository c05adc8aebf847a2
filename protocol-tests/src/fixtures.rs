//! Fixture formats shared by the tests: commented hex files and frame builders.

use doppio_proto::frame::{Direction, Flags, FrameHeader, Opcode, HEADER_LEN};
use doppio_proto::ProtocolVersion;

/// Parses a commented hex fixture: on each line, everything from `#` on is a comment;
/// the rest is hex digits, with any whitespace between them.
///
/// Panics (with the line number) on a character that is not a hex digit or on an odd
/// number of digits: a broken fixture is a broken test.
pub fn parse_hex(text: &str) -> Vec<u8> {
    let mut digits = Vec::new();
    for (no, line) in text.lines().enumerate() {
        let data = line.split('#').next().unwrap_or("");
        for ch in data.chars().filter(|c| !c.is_whitespace()) {
            let d = ch
                .to_digit(16)
                .unwrap_or_else(|| panic!("line {}: {ch:?} is not a hex digit", no + 1));
            digits.push(d as u8);
        }
    }
    assert!(
        digits.len() % 2 == 0,
        "odd number of hex digits ({})",
        digits.len()
    );
    digits.chunks(2).map(|p| p[0] << 4 | p[1]).collect()
}

/// Formats bytes as lowercase hex (for failure messages).
pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// An encoded frame: a header for `opcode` (direction from the opcode) and `body`.
pub fn frame(opcode: Opcode, flags: Flags, stream: i16, body: &[u8]) -> Vec<u8> {
    frame_dir(opcode.direction(), opcode, flags, stream, body)
}

/// An encoded frame travelling in `direction`, whatever the opcode's usual direction.
pub fn frame_dir(
    direction: Direction,
    opcode: Opcode,
    flags: Flags,
    stream: i16,
    body: &[u8],
) -> Vec<u8> {
    let header = FrameHeader {
        version: ProtocolVersion::V4,
        direction,
        flags,
        stream,
        opcode,
        length: u32::try_from(body.len()).expect("test body fits a u32"),
    };
    let mut out = Vec::with_capacity(HEADER_LEN + body.len());
    out.extend_from_slice(&header.to_bytes());
    out.extend_from_slice(body);
    out
}
