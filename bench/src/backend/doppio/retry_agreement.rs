//! The bench's retry policy ([`crate::backend::retry`], which the scylla backend follows)
//! decides as doppio's `DefaultRetryPolicy` (which the doppio backend runs): for a doppio
//! error of every kind, every server code, idempotent or not, at every count of retries.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::collections::BTreeSet;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use doppio_driver::error::{
    BreakCause, ConnectionError, TlsCause, TlsFailure, VersionError, Violation,
};
use doppio_driver::proto::response::{ErrorCode, ErrorDetail, ErrorResponse};
use doppio_driver::proto::scylla_extensions::{RateLimitError, RateLimitedOp};
use doppio_driver::proto::ProtoError;
use doppio_driver::session::{
    same_node_may_serve, DefaultRetryPolicy, RetryDecision as DoppioDecision, RetryPolicy as _,
};
use doppio_driver::{Error, ErrorKind as DriverKind};

use super::error::classify;
use crate::backend::retry::{AttemptFailure, RetryDecision, RetryPolicy};
use crate::engine::error_kind::ErrorKind;

/// What a doppio error says about its statement, in the bench's words: by the bench's kind
/// of it, and for two kinds by the server's code within it.
fn failure_of(e: &Error) -> AttemptFailure {
    let code = e.server_code();
    match classify(e) {
        ErrorKind::Overloaded
        | ErrorKind::Bootstrapping
        | ErrorKind::Unavailable
        | ErrorKind::Unprepared => AttemptFailure::NotRun,
        ErrorKind::ReadTimeout => AttemptFailure::ReplicasSlow,
        // Not CAS_WRITE_UNKNOWN, which counts as a write timeout too but is never retried.
        ErrorKind::WriteTimeout if code == Some(ErrorCode::WriteTimeout) => {
            AttemptFailure::ReplicasSlow
        }
        // Only SERVER_ERROR itself among the codes counted as `server_error` (not
        // PROTOCOL_ERROR, TRUNCATE_ERROR, codes the protocol does not define).
        ErrorKind::ServerError if code == Some(ErrorCode::ServerError) => {
            AttemptFailure::CoordinatorFailed
        }
        ErrorKind::Timeout | ErrorKind::ConnectionBroken | ErrorKind::Tls => AttemptFailure::Lost,
        ErrorKind::NoConnection => AttemptFailure::NotSent,
        _ => AttemptFailure::Final,
    }
}

fn node() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 9042))
}

fn server(code: ErrorCode, detail: ErrorDetail) -> Error {
    Error::Server {
        node: node(),
        error: Box::new(ErrorResponse {
            code,
            message: "test".into(),
            detail,
        }),
    }
}

/// A doppio error of every kind, and a server ERROR of every code.
fn every_error() -> Vec<Error> {
    let codes = [
        0x0000, 0x000A, 0x0100, 0x1000, 0x1001, 0x1002, 0x1003, 0x1100, 0x1200, 0x1300, 0x1400,
        0x1500, 0x1600, 0x1700, 0x2000, 0x2100, 0x2200, 0x2300, 0x2400, 0x2500, 0x7777,
    ];
    let mut errors: Vec<Error> = codes
        .into_iter()
        .map(|c| server(ErrorCode::from_code(c), ErrorDetail::None))
        .collect();
    let rate_limit = ErrorDetail::RateLimit(RateLimitError {
        op: RateLimitedOp::Write,
        rejected_by_coordinator: true,
    });
    let io = || Arc::new(io::Error::other("test"));
    errors.extend([
        server(ErrorCode::Other(0xF000), rate_limit),
        Error::Timeout {
            node: node(),
            after: Duration::from_secs(1),
        },
        Error::ConnectionBroken(ConnectionError::Broken {
            addr: node(),
            cause: BreakCause::Read(io()),
        }),
        Error::ConnectionBroken(ConnectionError::Tls {
            addr: node(),
            failure: TlsFailure::NotTls,
            cause: TlsCause::Io(io()),
        }),
        Error::NoConnection("test".into()),
        Error::Closed("test".into()),
        Error::Protocol {
            node: node(),
            violation: Box::new(Violation::PagedAnswer),
        },
        Error::Serialization(ProtoError::InvalidUtf8 { what: "test" }),
        Error::Handshake {
            node: node(),
            error: VersionError::NoneSpoken { offered: vec![] },
        },
        Error::TraceUnavailable {
            id: [0; 16],
            found: false,
            reads: 1,
        },
    ]);
    errors
}

fn doppio(d: DoppioDecision) -> RetryDecision {
    match d {
        DoppioDecision::RetrySameNode => RetryDecision::RetrySameNode,
        DoppioDecision::RetryNextNode => RetryDecision::RetryNextNode,
        DoppioDecision::Fail => RetryDecision::Fail,
    }
}

/// Every doppio kind, hence every bench kind doppio's errors count as, and every failure,
/// is walked; each decision is doppio's.
#[test]
fn the_bench_policy_decides_as_doppios_for_every_kind() {
    let errors = every_error();
    let kinds: BTreeSet<DriverKind> = errors.iter().map(Error::kind).collect();
    assert_eq!(
        kinds,
        DriverKind::ALL.into_iter().collect(),
        "every doppio kind"
    );
    let failures: Vec<AttemptFailure> = errors.iter().map(failure_of).collect();
    for f in AttemptFailure::ALL {
        assert!(failures.contains(&f), "{f:?} is reached");
    }
    for max_retries in [0, 1, 2] {
        let bench = RetryPolicy { max_retries };
        let theirs = DefaultRetryPolicy { max_retries };
        for (e, &failure) in errors.iter().zip(&failures) {
            assert_eq!(
                failure.connection_failed(),
                same_node_may_serve(e),
                "{e}: the same node may serve it"
            );
            for idempotent in [false, true] {
                for retries in 0..=max_retries {
                    assert_eq!(
                        bench.decide(failure, idempotent, retries),
                        doppio(theirs.decide(e, idempotent, retries)),
                        "{e} ({}), idempotent {idempotent}, {retries} of {max_retries} retries",
                        classify(e)
                    );
                }
            }
        }
    }
}
