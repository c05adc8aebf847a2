//! `doppio-proto`: the CQL native protocol v4 and v5, sans IO.
//!
//! Bytes in, typed messages out, and back: no executor, no socket, no clock. The driver, the
//! stub server and the tests all share this crate, so it encodes and decodes both directions.
//!
//! Map (every module, in the order a frame meets them):
//! - [`version`]: [`version::ProtocolVersion`] (v4, v5) and what differs between them, and
//!   [`version::MetadataIds`], whether a v4 connection turned on the result metadata ids of
//!   v5 (ScyllaDB's extension).
//! - [`wire`]: the spec's notations (`[int]`, `[string]`, `[bytes]`, `[value]`, ...).
//! - [`frame`]: the 9-byte header, opcodes, flags and the incremental [`frame::FrameDecoder`].
//! - [`segment`]: protocol v5's framing: envelopes in self-contained or split segments,
//!   each with a CRC24 header and a CRC32 payload, optionally lz4-compressed.
//! - [`compression`]: lz4 body compression as v4 defines it.
//! - [`consistency`]: `[consistency]` levels.
//! - [`types`]: [`types::ColumnType`], the `[option]` type descriptions.
//! - [`metadata`]: [`metadata::ColumnSpec`] and the result and prepared metadata that list
//!   them.
//! - [`request`]: every request message, encoded into a caller's buffer and decoded back.
//! - [`response`]: every response message with its envelope, decoded and encoded.
//! - [`value`]: [`value::CqlValue`] and newtypes for every CQL type, with their wire formats.
//! - [`values`]: [`values::QueryValues`], the contract between a statement and its bound
//!   values.
//! - [`serialize`]: Rust values into `[value]`s, checked against column types; rows of them
//!   ([`serialize::SerializeRow`]) bind as [`values::QueryValues`].
//! - [`deserialize`]: CQL values into Rust types, type-checked once per result.
//! - [`rows`]: the lazy row reader over a RESULT Rows body.
//! - `derive_support` (hidden): what the code derived by `doppio-macros` (`FromRow`,
//!   `SerializeRow`, and UDTs as `DeserializeValue` and `SerializeValue`) calls.
//! - `tuple_arity`: the one list of tuple arities (1 to 16) that rows serialize and
//!   deserialize for.
//! - [`murmur3`]: the token of a partition key, exactly as Cassandra's `Murmur3Partitioner`
//!   (the driver routes with it; the stub checks where requests land with it).
//! - [`sharding`]: ScyllaDB's protocol extension for shards: the `SCYLLA_*` options of
//!   SUPPORTED, the shard that owns a token, the source ports that reach a shard.
//! - [`scylla_extensions`]: ScyllaDB's other extensions: the LWT mark of prepared
//!   statements, the rate-limit error's fields, tablets routing v1's and v2's payloads,
//!   and result metadata ids in v4.
//! - [`tablet_version`]: tablets routing v2's tablet versions and the block byte a client
//!   appends to each EXECUTE so the node can tell a stale copy.
//! - [`error`]: [`ProtoError`], the one error type, with context on every variant, and
//!   [`ValueError`], why one value could not be converted (a [`ProtoError`] carries it as
//!   its source, with the column).
//!
//! Invariants:
//! - No `unwrap()`, `expect()` or indexing that can panic on data from the wire.
//! - Every length read from the wire is checked against the bytes left (and, for frame
//!   bodies, against a configured limit) before anything is sliced or reserved.
//! - Decoding borrows from the input; the success path of reading allocates only where a
//!   message owns a list whose size the wire gives (and then no more than the input can hold).
//! - On an encoding error the buffer may hold a partial message; callers truncate it back to
//!   where the message started.
//! - No `unsafe` outside tests (forbidden below).
//!
//! A STARTUP request, written as a client writes it and read back as a server reads it:
//!
//! ```
//! use bytes::BytesMut;
//! use doppio_proto::frame::{Direction, Flags, FrameDecoder};
//! use doppio_proto::request::{encode_envelope, Request, Startup};
//! use doppio_proto::ProtocolVersion;
//!
//! let mut buf = BytesMut::new();
//! let startup = Startup { options: &[("CQL_VERSION", "3.0.0")] };
//! encode_envelope(&mut buf, ProtocolVersion::V5, 0, Flags::NONE, &startup)?;
//!
//! let decoder = FrameDecoder::new(Direction::Request).with_any_version();
//! let frame = decoder.decode(&mut buf)?.expect("one whole frame");
//! assert_eq!(frame.header.version, ProtocolVersion::V5);
//! let decoded = Request::decode(&frame.header, &frame.body)?;
//! assert_eq!(decoded.request, Request::Startup(vec![("CQL_VERSION", "3.0.0")]));
//! # Ok::<(), doppio_proto::ProtoError>(())
//! ```
//!
//! Cargo features:
//! - `uuid` (on by default): [`uuid::Uuid`](https://docs.rs/uuid) as a Rust type of `uuid`
//!   and `timeuuid` values, both ways. Without it they map to [`value::CqlUuid`], which is
//!   always there.

#![cfg_attr(not(test), forbid(unsafe_code))]
// Errors are built lazily (`ok_or_else`) even where clippy finds them cheap: an error built
// eagerly is dropped on the success path, and dropping a `ProtoError` is a call into its
// drop glue on every frame encoded or parsed (measured on loopback: about 2 % of client CPU
// per request; perf/results/2026-11-23-issue15-ab).
#![allow(clippy::unnecessary_lazy_evaluations)]

pub mod compression;
pub mod consistency;
#[doc(hidden)]
pub mod derive_support;
pub mod deserialize;
pub mod error;
pub mod frame;
pub mod metadata;
pub mod murmur3;
pub mod request;
pub mod response;
pub mod rows;
pub mod scylla_extensions;
pub mod segment;
pub mod serialize;
pub mod sharding;
pub mod tablet_version;
mod tuple_arity;
pub mod types;
pub mod value;
pub mod values;
pub mod version;
pub mod wire;

pub use error::{ProtoError, Result, ValueError};
pub use version::{MetadataIds, ProtocolVersion};
