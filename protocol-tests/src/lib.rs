//! Shared helpers for the protocol conformance tests.
//!
//! The tests under `tests/` talk to a real Apache Cassandra started by
//! `scripts/cassandra.sh` (`scripts/test.sh` starts one). Its address comes from
//! `DOPPIO_CASSANDRA` (default `127.0.0.1:9042`). A test that needs the server and cannot
//! reach it fails with a message that says how to start one; it never passes silently.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use bytes::BytesMut;
use doppio_proto::frame::{Direction, Frame, FrameDecoder, FrameStatus};

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
