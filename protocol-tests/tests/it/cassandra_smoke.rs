//! Smoke test against the real Cassandra: OPTIONS on stream 0 gets SUPPORTED on stream 0,
//! and SUPPORTED advertises CQL 3 and protocol v4.

use doppio_proto::frame::{Direction, Flags, FrameHeader, Opcode};
use doppio_proto::wire::Reader;
use doppio_proto::ProtocolVersion;
use doppio_test_support::CASSANDRA;
use protocol_tests::TestConnection;

#[test]
fn options_gets_supported_from_real_cassandra() {
    if CASSANDRA.answering().is_none() {
        return; // skipped (outside CI) with a message
    }
    let mut conn = TestConnection::connect();
    let options = FrameHeader {
        version: ProtocolVersion::V4,
        direction: Direction::Request,
        flags: Flags::NONE,
        stream: 17,
        opcode: Opcode::Options,
        length: 0,
    };
    conn.send(&options.to_bytes());
    let frame = conn.recv();
    assert_eq!(frame.header.opcode, Opcode::Supported);
    assert_eq!(frame.header.stream, 17);
    assert_eq!(frame.header.direction, Direction::Response);

    let mut r = Reader::new(&frame.body);
    let supported = r.read_string_multimap("SUPPORTED options").unwrap();
    r.expect_end("SUPPORTED").unwrap();
    let get = |k: &str| {
        supported
            .iter()
            .find(|(key, _)| *key == k)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("SUPPORTED lacks {k}: {supported:?}"))
    };
    let cql = get("CQL_VERSION");
    assert!(
        cql.iter().any(|v| v.starts_with("3.")),
        "CQL_VERSION {cql:?}"
    );
    let protocols = get("PROTOCOL_VERSIONS");
    assert!(
        protocols.iter().any(|v| v.starts_with("4/")),
        "PROTOCOL_VERSIONS {protocols:?}"
    );
    let compression = get("COMPRESSION");
    assert!(compression.contains(&"lz4"), "COMPRESSION {compression:?}");
    println!("Cassandra SUPPORTED: {supported:?}");
}
