//! Protocol v5 framing against the real Cassandra 5.0: the STARTUP handshake unframed, then
//! envelopes in segments both ways, with and without lz4, including envelopes larger than
//! one segment in each direction. This is what proves doppio-proto's segment layout, CRC24
//! and CRC32 (whose initial bytes the spec does not give) against a server.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use bytes::BytesMut;
use doppio_proto::frame::HEADER_LEN;
use doppio_proto::segment::{
    EnvelopeAssembler, SegmentCompression, SegmentDecoder, SegmentEncoder,
};
use doppio_proto::wire::{self, Reader};
use doppio_test_support::CASSANDRA;
use protocol_tests::unique_keyspace;

const V5_REQUEST: u8 = 0x05;
const V5_RESPONSE: u8 = 0x85;
const OP_STARTUP: u8 = 0x01;
const OP_READY: u8 = 0x02;
const OP_ERROR: u8 = 0x00;
const OP_OPTIONS: u8 = 0x05;
const OP_SUPPORTED: u8 = 0x06;
const OP_QUERY: u8 = 0x07;
const OP_RESULT: u8 = 0x08;

/// One envelope as raw parts.
#[derive(Debug)]
struct Envelope {
    version: u8,
    stream: i16,
    opcode: u8,
    body: Vec<u8>,
}

fn envelope(stream: i16, opcode: u8, body: &[u8]) -> Vec<u8> {
    let mut e = vec![V5_REQUEST, 0];
    e.extend_from_slice(&stream.to_be_bytes());
    e.push(opcode);
    e.extend_from_slice(&(body.len() as u32).to_be_bytes());
    e.extend_from_slice(body);
    e
}

fn parse(bytes: &[u8]) -> Envelope {
    let len = u32::from_be_bytes(bytes[5..9].try_into().unwrap()) as usize;
    assert_eq!(bytes.len(), HEADER_LEN + len, "one whole envelope");
    Envelope {
        version: bytes[0],
        stream: i16::from_be_bytes([bytes[2], bytes[3]]),
        opcode: bytes[4],
        body: bytes[HEADER_LEN..].to_vec(),
    }
}

/// A v5 QUERY body: `<query><consistency><flags: [int] in v5>`.
fn query_body(cql: &str) -> Vec<u8> {
    let mut b = Vec::new();
    wire::put_long_string(&mut b, cql, "query").unwrap();
    wire::put_short(&mut b, 0x0001); // ONE
    wire::put_int(&mut b, 0);
    b
}

struct V5Connection {
    socket: TcpStream,
    compression: SegmentCompression,
    inbox: BytesMut,
    envelopes: BytesMut,
    assembler: EnvelopeAssembler,
    segments_in: usize,
    split_segments_in: usize,
    /// The segments consumed since the last envelope was returned.
    wire: Vec<u8>,
    /// The segments that carried the last envelope and nothing else (empty when it shared
    /// them): what `record` keeps as a fixture.
    last_wire: Vec<u8>,
}

impl V5Connection {
    /// Connects and completes STARTUP (unframed, as the spec's section 2.3.1 says).
    fn open(compression: SegmentCompression) -> Self {
        let addr = CASSANDRA.addr();
        let mut socket = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap();
        socket
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let mut options = vec![("CQL_VERSION", "3.0.0")];
        if compression == SegmentCompression::Lz4 {
            options.push(("COMPRESSION", "lz4"));
        }
        let mut body = Vec::new();
        wire::put_string_map(&mut body, &options, "startup").unwrap();
        socket.write_all(&envelope(0, OP_STARTUP, &body)).unwrap();
        // READY comes unframed: a bare envelope.
        let mut header = [0u8; HEADER_LEN];
        socket.read_exact(&mut header).unwrap();
        let len = u32::from_be_bytes(header[5..9].try_into().unwrap()) as usize;
        let mut rest = vec![0u8; len];
        socket.read_exact(&mut rest).unwrap();
        assert_eq!(header[0], V5_RESPONSE, "Cassandra answers STARTUP in v5");
        assert_eq!(
            header[4],
            OP_READY,
            "READY expected, got opcode {:#x}: {}",
            header[4],
            String::from_utf8_lossy(&rest)
        );
        Self {
            socket,
            compression,
            inbox: BytesMut::new(),
            envelopes: BytesMut::new(),
            assembler: EnvelopeAssembler::new(1 << 26),
            segments_in: 0,
            split_segments_in: 0,
            wire: Vec::new(),
            last_wire: Vec::new(),
        }
    }

    fn send(&mut self, envelopes: &[u8]) {
        let mut wire = BytesMut::new();
        SegmentEncoder::new(self.compression)
            .encode(envelopes, &mut wire)
            .unwrap();
        self.socket.write_all(&wire).unwrap();
    }

    /// The next whole envelope from the server, through segments.
    fn recv(&mut self) -> Envelope {
        let decoder = SegmentDecoder::new(self.compression);
        loop {
            if let Some(len) = self
                .envelopes
                .get(5..9)
                .map(|l| HEADER_LEN + u32::from_be_bytes(l.try_into().unwrap()) as usize)
            {
                if self.envelopes.len() >= len {
                    let envelope = parse(&self.envelopes.split_to(len));
                    self.last_wire = std::mem::take(&mut self.wire);
                    if !self.envelopes.is_empty() {
                        self.last_wire.clear();
                    }
                    return envelope;
                }
            }
            let before = self.inbox.clone();
            match decoder.decode(&mut self.inbox) {
                Ok(Some(segment)) => {
                    let used = before.len() - self.inbox.len();
                    self.wire.extend_from_slice(&before[..used]);
                    self.segments_in += 1;
                    if !segment.self_contained {
                        self.split_segments_in += 1;
                    }
                    self.assembler.push(segment, &mut self.envelopes).unwrap();
                    continue;
                }
                Ok(None) => {}
                Err(e) => panic!("doppio-proto rejects Cassandra's segment: {e}"),
            }
            let mut chunk = [0u8; 65536];
            let n = self.socket.read(&mut chunk).unwrap();
            assert!(n > 0, "Cassandra closed the connection");
            self.inbox.extend_from_slice(&chunk[..n]);
        }
    }

    /// Keeps the segments of the last envelope as `fixtures/captured/v5_{label}.seg` (with
    /// `lz4_` before the label on a compressed connection) when `DOPPIO_RECORD_FIXTURES=1`
    /// (read back by `captured_v5_fixtures.rs`).
    fn record(&self, label: &str) {
        if std::env::var("DOPPIO_RECORD_FIXTURES").is_ok_and(|v| v == "1") {
            assert!(!self.last_wire.is_empty(), "{label}: a shared segment");
            let lz4 = match self.compression {
                SegmentCompression::None => "",
                SegmentCompression::Lz4 => "lz4_",
            };
            let path = protocol_tests::captured_dir().join(format!("v5_{lz4}{label}.seg"));
            std::fs::write(path, &self.last_wire).unwrap();
        }
    }

    fn query(&mut self, stream: i16, cql: &str) -> Envelope {
        self.send(&envelope(stream, OP_QUERY, &query_body(cql)));
        let e = self.recv();
        assert_eq!(e.stream, stream);
        assert_eq!(
            e.opcode,
            OP_RESULT,
            "{cql}: {}",
            String::from_utf8_lossy(&e.body)
        );
        e
    }
}

fn segments_both_ways(compression: SegmentCompression) {
    if CASSANDRA.answering().is_none() {
        return; // skipped (outside CI) with a message
    }
    let mut c = V5Connection::open(compression);

    // Two envelopes in one self-contained segment; both answered, in segments.
    let mut two = envelope(1, OP_OPTIONS, &[]);
    two.extend(envelope(2, OP_OPTIONS, &[]));
    c.send(&two);
    // Answered in either order (the node runs requests concurrently).
    let mut answered = Vec::new();
    for _ in 0..2 {
        let e = c.recv();
        assert_eq!((e.version, e.opcode), (V5_RESPONSE, OP_SUPPORTED));
        answered.push(e.stream);
        let supported = Reader::new(&e.body)
            .read_string_multimap("SUPPORTED")
            .unwrap();
        let versions = &supported
            .iter()
            .find(|(k, _)| *k == "PROTOCOL_VERSIONS")
            .unwrap()
            .1;
        assert!(versions.iter().any(|v| v.starts_with("5/")), "{versions:?}");
    }
    answered.sort();
    assert_eq!(answered, [1, 2]);

    // A request larger than a segment (cut into segments that are not self-contained):
    // a 200 KiB blob literal written, then read back, whose answer is larger than a
    // segment too.
    let ks = unique_keyspace(match compression {
        SegmentCompression::None => "v5_plain",
        SegmentCompression::Lz4 => "v5_lz4",
    });
    c.query(
        3,
        &format!(
            "CREATE KEYSPACE {ks} WITH replication = {{'class': 'SimpleStrategy', \
             'replication_factor': 1}}"
        ),
    );
    c.query(
        4,
        &format!("CREATE TABLE {ks}.t (k int PRIMARY KEY, v blob)"),
    );
    // Not compressible to less than a segment either: bytes from a xorshift generator.
    let mut x = 0x2545_F491u32;
    let blob: Vec<u8> = (0..200 * 1024)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect();
    let hex: String = blob.iter().map(|b| format!("{b:02x}")).collect();
    c.query(5, &format!("INSERT INTO {ks}.t (k, v) VALUES (1, 0x{hex})"));
    let before = c.split_segments_in;
    let e = c.query(6, &format!("SELECT v FROM {ks}.t WHERE k = 1"));
    assert!(
        c.split_segments_in >= before + 2,
        "the 200 KiB answer came in segments that are not self-contained"
    );
    // The Rows result ends with the one cell: [int] length then the bytes.
    let tail = &e.body[e.body.len() - blob.len() - 4..];
    assert_eq!(
        i32::from_be_bytes(tail[..4].try_into().unwrap()),
        blob.len() as i32
    );
    assert_eq!(
        &tail[4..],
        &blob[..],
        "the blob read back is the one written"
    );

    // An invalid statement still gets a framed ERROR on its stream.
    c.send(&envelope(
        7,
        OP_QUERY,
        &query_body("SELECT nothing FROM nowhere"),
    ));
    let e = c.recv();
    assert_eq!((e.stream, e.opcode), (7, OP_ERROR));
    c.record("error_invalid");
    c.query(8, &format!("DROP KEYSPACE {ks}"));
    println!(
        "{compression:?}: {} segments in, {} of them parts of a large envelope",
        c.segments_in, c.split_segments_in
    );
}

#[test]
fn v5_segments_without_compression_work_both_ways_with_cassandra() {
    segments_both_ways(SegmentCompression::None);
}

#[test]
fn v5_segments_with_lz4_work_both_ways_with_cassandra() {
    segments_both_ways(SegmentCompression::Lz4);
}
