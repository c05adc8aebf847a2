//! Shared helpers for the protocol conformance tests.
//!
//! Some tests under `tests/` talk to a real Apache Cassandra started by
//! `scripts/cassandra.sh` (`scripts/test.sh` starts one). Its address comes from
//! `DOPPIO_CASSANDRA` (default `127.0.0.1:9042`). Those tests are in `tests/it/cassandra_*.rs`,
//! and each first asks `doppio_test_support::CASSANDRA.answering()`: when no node answers
//! it is skipped with a message that says how to start one, or fails in CI (`CI` set).
//! The other tests need no server.
//!
//! Parts:
//! - [`fixtures`]: hex fixtures and hand-built frames for the golden and split-point tests.
//! - [`fuzz_checks`]: what each fuzz target checks, shared by the cargo-fuzz targets
//!   (`protocol-tests/fuzz`, which depend on this crate) and the corpus replay test.
//! - [`reencode`]: re-encodes a decoded response, to check that decoding loses nothing.
//! - this file: [`TestConnection`], a blocking connection to the real Cassandra.

pub mod fixtures;
pub mod fuzz_checks;
pub mod reencode;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use bytes::BytesMut;
use doppio_proto::frame::{
    Direction, Flags, Frame, FrameDecoder, FrameHeader, FrameStatus, Opcode,
};
use doppio_proto::wire;
use doppio_proto::ProtocolVersion;

/// The address of the local Cassandra the tests use.
pub fn cassandra_addr() -> SocketAddr {
    let addr = std::env::var("DOPPIO_CASSANDRA").unwrap_or_else(|_| "127.0.0.1:9042".into());
    match addr.parse() {
        Ok(a) => a,
        Err(e) => panic!("DOPPIO_CASSANDRA={addr:?} is not an ADDR:PORT: {e}"),
    }
}

/// A blocking connection to Cassandra for tests: write whole frames, read whole frames.
#[derive(Debug)]
pub struct TestConnection {
    stream: TcpStream,
    buf: BytesMut,
    decoder: FrameDecoder,
}

impl TestConnection {
    /// Connects to [`cassandra_addr`], or panics with instructions to start Cassandra.
    pub fn connect() -> Self {
        let addr = cassandra_addr();
        let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap_or_else(|e| {
            panic!(
                "cannot reach Cassandra at {addr}: {e}. Start one with `scripts/cassandra.sh start` \
                 (or run `scripts/test.sh`, which does)"
            )
        });
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .expect("set read timeout");
        stream.set_nodelay(true).expect("set nodelay");
        Self {
            stream,
            buf: BytesMut::with_capacity(64 * 1024),
            decoder: FrameDecoder::new(Direction::Response),
        }
    }

    /// Writes the encoded frame(s) in `bytes`.
    pub fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).expect("write to Cassandra");
    }

    /// Sends one request frame (`opcode`, `flags`, `body`) on `stream`.
    pub fn send_request(&mut self, opcode: Opcode, flags: Flags, stream: i16, body: &[u8]) {
        let header = FrameHeader {
            version: ProtocolVersion::V4,
            direction: Direction::Request,
            flags,
            stream,
            opcode,
            length: u32::try_from(body.len()).expect("request body fits a u32"),
        };
        let mut bytes = header.to_bytes().to_vec();
        bytes.extend_from_slice(body);
        self.send(&bytes);
    }

    /// Sends a request on stream 1 and returns the response on that stream, skipping any
    /// EVENT frames (stream -1) that arrive first. Panics on any other frame.
    pub fn request(&mut self, opcode: Opcode, flags: Flags, body: &[u8]) -> Frame {
        let stream = 1;
        self.send_request(opcode, flags, stream, body);
        loop {
            let frame = self.recv();
            if frame.header.stream == stream {
                return frame;
            }
            assert_eq!(
                frame.header.opcode,
                Opcode::Event,
                "unexpected frame on stream {}",
                frame.header.stream
            );
        }
    }

    /// STARTUP with CQL 3.0.0 and the given extra options; panics unless READY comes back.
    pub fn startup_with(&mut self, extra: &[(&str, &str)]) -> Frame {
        let mut options = vec![("CQL_VERSION", "3.0.0")];
        options.extend_from_slice(extra);
        let mut body = Vec::new();
        wire::put_string_map(&mut body, &options, "STARTUP options").expect("small map");
        let frame = self.request(Opcode::Startup, Flags::NONE, &body);
        assert_eq!(
            frame.header.opcode,
            Opcode::Ready,
            "STARTUP answered {frame:?}"
        );
        frame
    }

    /// STARTUP with CQL 3.0.0 and no compression.
    pub fn startup(&mut self) -> Frame {
        self.startup_with(&[])
    }

    /// A QUERY at consistency ONE with no values, flags and options; returns the response.
    pub fn query(&mut self, cql: &str) -> Frame {
        self.request(Opcode::Query, Flags::NONE, &query_body(cql, 0x0001))
    }

    /// Like [`TestConnection::query`], but panics unless the response is a RESULT.
    pub fn query_ok(&mut self, cql: &str) -> Frame {
        let frame = self.query(cql);
        assert_eq!(
            frame.header.opcode,
            Opcode::Result,
            "{cql}: {:?}",
            String::from_utf8_lossy(&frame.body)
        );
        frame
    }

    /// Reads until one whole response frame is buffered, and returns it.
    pub fn recv(&mut self) -> Frame {
        loop {
            if let Some(frame) = self.decoder.decode(&mut self.buf).expect("valid frame") {
                return frame;
            }
            let need = match self.decoder.check(&self.buf).expect("valid header") {
                FrameStatus::NeedMore(n) => n,
                FrameStatus::Complete { .. } => 0,
            };
            let mut chunk = vec![0u8; need.clamp(1, 64 * 1024)];
            let n = self.stream.read(&mut chunk).expect("read from Cassandra");
            assert!(n > 0, "Cassandra closed the connection");
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }
}

/// The body of a QUERY at `consistency` with no flags: `[long string]`, consistency, 0.
pub fn query_body(cql: &str, consistency: u16) -> Vec<u8> {
    let mut body = Vec::new();
    wire::put_long_string(&mut body, cql, "query").expect("query fits");
    wire::put_short(&mut body, consistency);
    body.push(0);
    body
}

/// A keyspace name unique to this test run: `prefix`, the process id and the time, so
/// that tests (and test binaries) running in parallel never share a keyspace.
pub fn unique_keyspace(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mut name: String = prefix
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .take(20)
        .collect();
    name.push_str(&format!(
        "_{}_{}",
        std::process::id(),
        nanos % 1_000_000_000_000
    ));
    // Cassandra limits names to 48 characters.
    name.truncate(48);
    name
}

/// Where captured response frames are written and read: `protocol-tests/fixtures/captured`.
pub fn captured_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/captured")
}

/// Writes captured frames to [`captured_dir`] when `DOPPIO_RECORD_FIXTURES=1`.
#[derive(Debug)]
pub struct Recorder {
    enabled: bool,
    prefix: String,
}

impl Recorder {
    /// A recorder whose files are named `{prefix}_{label}.bin`.
    pub fn new(prefix: &str) -> Self {
        let enabled = std::env::var("DOPPIO_RECORD_FIXTURES").is_ok_and(|v| v == "1");
        if enabled {
            std::fs::create_dir_all(captured_dir()).expect("create fixtures/captured");
        }
        Self {
            enabled,
            prefix: prefix.to_owned(),
        }
    }

    /// True when frames are being written.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Records `frame` (header and body, as received) under `label`.
    pub fn record(&self, label: &str, frame: &Frame) {
        if !self.enabled {
            return;
        }
        let mut bytes = frame.header.to_bytes().to_vec();
        bytes.extend_from_slice(&frame.body);
        let path = captured_dir().join(format!("{}_{label}.bin", self.prefix));
        std::fs::write(&path, bytes).expect("write captured frame");
    }
}
