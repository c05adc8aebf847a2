//! Helpers shared by the stub's test files: a stub with rules, the stub's binary, a
//! scylla-rust-driver session, and [`RawClient`], a protocol v4 client made of doppio-proto's
//! parts only. The stub's tests test the stub with these; doppio's own sessions against the
//! stub are tested with the driver (`driver/tests/it/stub_*.rs`), so the stub does not
//! dev-depend on the driver that dev-depends on it.

#![allow(clippy::unwrap_used)]
// tests: a panic is a failed test with its location

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::Duration;

use bytes::BytesMut;
use doppio_proto::consistency::Consistency;
use doppio_proto::frame::{Direction, Flags, FrameDecoder};
use doppio_proto::request::{
    encode_request, Execute, Options, Prepare, Query, QueryParameters, RequestBody, Startup,
    WithTabletBlock,
};
use doppio_proto::response::{Prepared, Response, ResponseFrame, ResultBody};
use doppio_proto::wire::RawValue;
use doppio_proto::MetadataIds;
use doppio_rt::Runtime;
use doppio_stub::{Rules, Shape, Stub, StubConfig, StubHandle};

/// A stub on `runtime`, on an ephemeral port with these TOML `rules` and result `shape`,
/// rules not logged.
pub(crate) fn stub(runtime: Runtime, rules: &str, shape: Shape) -> StubHandle {
    Stub::start(StubConfig {
        runtime,
        shape,
        rules: Rules::parse(rules).unwrap(),
        log_rules: false,
        ..StubConfig::default()
    })
    .unwrap()
}

/// One `#[test]` per runtime for each named `fn name(runtime: Runtime)`.
pub(crate) use doppio_rt::runtime_tests;

/// The `doppio-stub` binary, running, and what it said first.
pub(crate) struct StubProcess {
    /// The process.
    pub child: Child,
    /// Its standard output, past the first line.
    pub out: BufReader<ChildStdout>,
    /// Where its first line says it listens.
    pub addr: SocketAddr,
}

/// Starts the `doppio-stub` binary on `runtime` (on an ephemeral loopback port, unpinned)
/// with `args` added, and reads its first line, `listening on ADDR`.
pub(crate) fn spawn_binary(runtime: Runtime, args: &[&str]) -> StubProcess {
    let mut child = Command::new(env!("CARGO_BIN_EXE_doppio-stub"))
        .args([
            "--listen",
            "127.0.0.1:0",
            "--no-pin",
            "--runtime",
            runtime.name(),
        ])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let addr: SocketAddr = line
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("first line: {line:?}"))
        .trim()
        .parse()
        .unwrap();
    StubProcess { child, out, addr }
}

/// Stops the stub's binary as Ctrl-C or a service manager would (SIGTERM), asserts that it
/// exited with code 0, and returns what it wrote on stderr (its counts).
pub(crate) fn terminate(child: Child) -> String {
    // SAFETY: signalling our own child process, which has not been waited for yet.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
    }
    let done = child.wait_with_output().unwrap();
    assert!(
        done.status.success(),
        "exit code 0 on SIGTERM: {:?}",
        done.status
    );
    String::from_utf8_lossy(&done.stderr).into_owned()
}

/// Runs `f` with a scylla-rust-driver session to `addr` (its default builder) on a
/// current-thread tokio runtime.
pub(crate) fn on_scylla<F, Fut>(addr: SocketAddr, f: F)
where
    F: FnOnce(scylla::client::session::Session) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let s = scylla::client::session_builder::SessionBuilder::new()
            .known_node_addr(addr)
            .build()
            .await
            .unwrap();
        f(s).await;
    });
}

/// The largest answer a [`RawClient`] takes.
const MAX_FRAME: usize = 1 << 24;

/// A protocol v4 connection to the stub made of doppio-proto's parts only: one request at a
/// time, each answer read whole.
pub(crate) struct RawClient {
    socket: TcpStream,
    inbox: BytesMut,
    next_stream: i16,
    /// Whether the connection turned on ScyllaDB's result metadata ids (the test says so
    /// once its STARTUP did): how PREPARED, EXECUTE and Rows are laid out.
    pub(crate) metadata_ids: MetadataIds,
    /// The tablet version block each EXECUTE ends with (`None`: none is written; a
    /// connection that turned tablets routing v2 on wants one).
    pub(crate) tablet_block: Option<u8>,
}

impl RawClient {
    /// Connects to `addr` without STARTUP (an OPTIONS may come first).
    pub(crate) fn open(addr: SocketAddr) -> Self {
        let socket = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap();
        socket
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        Self {
            socket,
            inbox: BytesMut::new(),
            next_stream: 0,
            metadata_ids: MetadataIds::ByVersion,
            tablet_block: None,
        }
    }

    /// Connects to `addr` and sends STARTUP, which must be answered READY.
    pub(crate) fn ready(addr: SocketAddr) -> Self {
        let mut c = Self::open(addr);
        c.startup();
        c
    }

    /// STARTUP, answered READY.
    pub(crate) fn startup(&mut self) {
        self.startup_with(&[("CQL_VERSION", "3.0.0")]);
    }

    /// STARTUP with these options, answered READY.
    pub(crate) fn startup_with(&mut self, options: &[(&str, &str)]) {
        assert_eq!(self.call(&Startup { options }).response, Response::Ready);
    }

    /// OPTIONS: what SUPPORTED lists.
    pub(crate) fn options(&mut self) -> Vec<(String, Vec<String>)> {
        match self.call(&Options).response {
            Response::Supported(options) => options,
            other => panic!("OPTIONS: {other:?}"),
        }
    }

    /// Sends one request and returns its answer.
    pub(crate) fn call(&mut self, request: &impl RequestBody) -> ResponseFrame {
        let stream = self.next_stream;
        self.next_stream += 1;
        let mut out = BytesMut::new();
        encode_request(&mut out, stream, Flags::NONE, request).unwrap();
        self.socket.write_all(&out).unwrap();
        let frames = FrameDecoder::new(Direction::Response);
        loop {
            if let Some(frame) = frames.decode(&mut self.inbox).unwrap() {
                let answer =
                    ResponseFrame::decode_with(&frame, None, MAX_FRAME, self.metadata_ids).unwrap();
                assert_eq!(answer.stream, stream);
                return answer;
            }
            let mut chunk = [0u8; 65536];
            let n = self.socket.read(&mut chunk).unwrap();
            assert!(n > 0, "the stub closed the connection");
            self.inbox.extend_from_slice(&chunk[..n]);
        }
    }

    /// PREPARE, answered PREPARED.
    pub(crate) fn prepare(&mut self, cql: &str) -> Prepared {
        match self
            .call(&Prepare {
                query: cql,
                keyspace: None,
            })
            .response
        {
            Response::Result(ResultBody::Prepared(p)) => *p,
            other => panic!("{cql}: {other:?}"),
        }
    }

    /// QUERY of `cql` at ONE with no values: the answer.
    pub(crate) fn query(&mut self, cql: &str) -> Response {
        let query = Query {
            query: cql,
            params: QueryParameters {
                consistency: Consistency::One,
                ..QueryParameters::default()
            },
            values: &(),
        };
        self.call(&query).response
    }

    /// QUERY of `cql`, answered with rows: how many.
    pub(crate) fn query_rows(&mut self, cql: &str) -> usize {
        match self.query(cql) {
            Response::Result(ResultBody::Rows(rows)) => rows.view().len(),
            other => panic!("{cql}: {other:?}"),
        }
    }

    /// EXECUTE of `prepared` with these blob `values` at ONE: the answer.
    pub(crate) fn execute(&mut self, prepared: &Prepared, values: &[&[u8]]) -> Response {
        self.execute_with(prepared, values, false, None)
    }

    /// EXECUTE of `prepared` with these blob `values` at ONE, asking to skip the result
    /// metadata if `skip_metadata`, with `result_metadata_id` (sent where the connection
    /// carries ids): the answer.
    pub(crate) fn execute_with(
        &mut self,
        prepared: &Prepared,
        values: &[&[u8]],
        skip_metadata: bool,
        result_metadata_id: Option<&[u8]>,
    ) -> Response {
        let values: Vec<RawValue<'_>> = values.iter().map(|v| RawValue::Bytes(v)).collect();
        let execute = Execute {
            id: &prepared.id,
            result_metadata_id,
            metadata_ids: self.metadata_ids,
            params: QueryParameters {
                consistency: Consistency::One,
                skip_metadata,
                ..QueryParameters::default()
            },
            values: &values.as_slice(),
            columns: None,
        };
        match self.tablet_block {
            Some(block) => {
                self.call(&WithTabletBlock {
                    body: &execute,
                    block,
                })
                .response
            }
            None => self.call(&execute).response,
        }
    }
}
