//! Hostile input: random bytes and mutated valid frames fed to every decoder never panic,
//! and never allocate more than a bound tied to the input size.
//!
//! The test binary installs a counting global allocator (`main.rs`); every decode runs inside
//! [`measure`], and the largest single allocation and the peak of bytes in use are checked.

use bytes::{Bytes, BytesMut};
use doppio_alloc_count::{measure, AllocStats};
use doppio_proto::compression::Compression;
use doppio_proto::frame::{Direction, Flags, Frame, FrameDecoder, FrameHeader, Opcode, HEADER_LEN};
use doppio_proto::request::Request;
use doppio_proto::response::{Response, ResponseFrame, ResultBody};
use doppio_proto::rows::Rows;
use doppio_proto::types::ColumnType;
use doppio_proto::value::CqlValue;
use doppio_proto::wire::Reader;
use doppio_proto::ProtocolVersion;
use proptest::prelude::*;
use protocol_tests::fixtures::{frame, parse_hex};
use protocol_tests::reencode::{reencode_request, reencode_response};

/// The body limit the decoders under test are configured with.
const LIMIT: usize = 64 * 1024;

/// The most a decoder may allocate for `input_len` bytes of input, in one allocation and
/// in total at any moment: a fixed slack for small bookkeeping plus a constant factor of
/// the input (owned copies of strings, vectors of parsed elements).
fn bound(input_len: usize) -> usize {
    4096 + 64 * input_len
}

fn check_bound(what: &str, input_len: usize, s: AllocStats) {
    check_limit(what, input_len, bound(input_len), s);
}

fn check_limit(what: &str, input_len: usize, bound: usize, s: AllocStats) {
    assert!(
        s.largest <= bound,
        "{what}: one allocation of {} bytes for {input_len} bytes of input",
        s.largest
    );
    assert!(
        s.peak_in_use <= bound,
        "{what}: {} bytes in use at peak for {input_len} bytes of input",
        s.peak_in_use
    );
}

/// Runs every decoder that exists on `input` read as a whole frame stream, and `body` as
/// the body of a frame with each opcode. Returns nothing: the checks are "no panic" and
/// the allocation bound.
fn feed(input: &[u8]) {
    for direction in [Direction::Request, Direction::Response] {
        let d = FrameDecoder::new(direction).with_max_body_len(LIMIT);
        let (_, s) = measure(|| {
            let _ = d.check(input);
        });
        assert_eq!(s.count, 0, "FrameDecoder::check allocated");
        let mut buf = BytesMut::from(input);
        let (_, s) = measure(|| {
            // Decode until the decoder stops: every frame it gives is within its limit.
            let mut frames = 0;
            while let Ok(Some(f)) = d.decode(&mut buf) {
                assert!(f.body.len() <= LIMIT);
                assert_eq!(f.body.len(), f.header.length as usize);
                frames += 1;
                decode_body(f.header.opcode, f.header.flags, &f.body);
            }
            frames
        });
        // A compressed frame may decompress to at most the configured limit.
        check_limit("frame stream", input.len(), bound(input.len()) + LIMIT, s);
    }
    let (_, s) = measure(|| {
        let _ = ColumnType::decode(&mut Reader::new(input));
    });
    check_bound("ColumnType::decode", input.len(), s);
    let (_, s) = measure(|| {
        let _ = Reader::new(input).read_string_map("m");
        let _ = Reader::new(input).read_string_multimap("mm");
        let _ = Reader::new(input).read_bytes_map("bm");
        let _ = Reader::new(input).read_string_list("l").map(|l| l.count());
        let _ = Reader::new(input).read_inet("inet");
        let _ = Reader::new(input).read_value("v");
        let _ = Reader::new(input).read_long_string("ls");
    });
    check_bound("wire readers", input.len(), s);
    for t in value_types() {
        let (_, s) = measure(|| {
            let _ = CqlValue::decode(&t, input);
        });
        check_bound("CqlValue::decode", input.len(), s);
    }
    for op in Opcode::ALL {
        let (_, s) = measure(|| decode_body(op, Flags::NONE, input));
        check_bound(op.name(), input.len(), s);
    }
}

/// Types to decode hostile values as: every native type and nested collections.
fn value_types() -> Vec<ColumnType> {
    use ColumnType as T;
    let b = Box::new;
    vec![
        T::Ascii,
        T::Bigint,
        T::Blob,
        T::Boolean,
        T::Counter,
        T::Decimal,
        T::Double,
        T::Float,
        T::Int,
        T::Timestamp,
        T::Uuid,
        T::Varchar,
        T::Varint,
        T::Timeuuid,
        T::Inet,
        T::Date,
        T::Time,
        T::Smallint,
        T::Tinyint,
        T::Duration,
        T::List(b(T::Int)),
        T::Map(b(T::Varchar), b(T::List(b(T::Blob)))),
        T::Set(b(T::Set(b(T::Varint)))),
        T::Tuple(vec![T::Int, T::Varchar, T::List(b(T::Int))]),
        T::Udt {
            keyspace: "ks".into(),
            name: "u".into(),
            fields: vec![
                ("a".into(), T::Int),
                ("b".into(), T::Map(b(T::Int), b(T::Int))),
            ],
        },
        T::Vector {
            element: b(T::Float),
            dimension: 3,
        },
        T::Vector {
            element: b(T::Varchar),
            dimension: 1000,
        },
    ]
}

/// The row reader over a hostile result: every row, every cell, dynamic and typed.
fn walk_rows(rows: &Rows) {
    // A zero-column result may claim 2^31 empty rows: bound the walk, not the decoder.
    for row in rows.iter().take(10_000) {
        let Ok(row) = row else { break };
        assert_eq!(row.len(), rows.metadata.columns_count);
        let _ = row.to_values();
        for i in 0..row.len().min(64) {
            let _ = row.get::<Option<CqlValue>>(i);
            let _ = row.get::<Option<&str>>(i);
        }
    }
    if let Ok(typed) = rows.typed::<(Option<i32>,)>() {
        for r in typed.take(10_000) {
            let _ = r;
        }
    }
}

/// Every message decoder that exists, for one body.
fn decode_body(op: Opcode, flags: Flags, body: &[u8]) {
    if flags.contains(Flags::COMPRESSION) {
        if let Ok(plain) = Compression::Lz4.decompress(body, LIMIT) {
            assert!(plain.len() <= LIMIT);
            decode_body(op, flags.without(Flags::COMPRESSION), &plain);
        }
        return;
    }
    let header = FrameHeader {
        version: ProtocolVersion::V4,
        direction: op.direction(),
        flags,
        stream: 0,
        opcode: op,
        length: body.len() as u32,
    };
    if op.direction() == Direction::Response {
        let frame = Frame {
            header,
            body: Bytes::copy_from_slice(body),
        };
        if let Ok(decoded) = ResponseFrame::decode(&frame, Some(Compression::Lz4), LIMIT) {
            let _ = reencode_response(&decoded, None);
            if let Response::Result(ResultBody::Rows(rows)) = &decoded.response {
                walk_rows(rows);
            }
        }
    }
    if op.direction() == Direction::Request {
        if let Ok(decoded) = Request::decode(&header, body) {
            // Whatever decodes re-encodes without panicking (it may refuse, e.g. a
            // negative timestamp, or a custom payload the encoders do not write).
            let _ = reencode_request(&header, &decoded);
        }
    }
}

/// Tuples of 65535 elements nested 40 deep, each claiming more than the input holds.
fn nested_tuples() -> Vec<u8> {
    let mut input = Vec::new();
    for _ in 0..40 {
        input.extend_from_slice(&[0x00, 0x31, 0xff, 0xff]);
    }
    input.resize(input.len() + 16 * 1024, 0);
    input
}

/// UDTs of 65535 fields nested 40 deep.
fn nested_udts() -> Vec<u8> {
    let mut input = Vec::new();
    for _ in 0..40 {
        input.extend_from_slice(&[0x00, 0x30, 0, 1, b'k', 0, 1, b'u', 0xff, 0xff, 0, 1, b'f']);
    }
    input.resize(input.len() + 16 * 1024, 0);
    input
}

#[test]
fn column_type_hostile_nesting_single_allocation_bounded() {
    for (what, input) in [
        ("nested tuples", nested_tuples()),
        ("nested UDTs", nested_udts()),
    ] {
        let (r, s) = measure(|| ColumnType::decode(&mut Reader::new(&input)));
        assert!(r.is_err(), "{what} accepted");
        assert!(
            s.largest <= bound(input.len()),
            "{what}: one allocation of {} bytes for {} bytes of input",
            s.largest,
            input.len()
        );
    }
}

/// BUG (doppio-proto types.rs): each nesting level reserves `min(n, remaining / 2)`
/// elements before decoding its children, so 33 levels each reserve about as much as the
/// whole input: 16.5 KiB of nested tuples hold 19.5 MB at once (x1180); capped only by
/// 65535 elements x 33 levels (~150 MB) for a ~130 KiB type description.
#[test]
fn column_type_hostile_nesting_peak_bounded() {
    for (what, input) in [
        ("nested tuples", nested_tuples()),
        ("nested UDTs", nested_udts()),
    ] {
        let (r, s) = measure(|| ColumnType::decode(&mut Reader::new(&input)));
        assert!(r.is_err());
        check_bound(what, input.len(), s);
    }
}

#[test]
fn column_type_deep_nesting_is_rejected() {
    for depth in [33usize, 100, 100_000] {
        let mut input = Vec::new();
        for _ in 0..depth {
            input.extend_from_slice(&0x0020u16.to_be_bytes());
        }
        input.extend_from_slice(&0x0009u16.to_be_bytes());
        let (r, s) = measure(|| ColumnType::decode(&mut Reader::new(&input)));
        assert!(r.is_err(), "depth {depth} accepted");
        check_bound("deep list", input.len(), s);
    }
    // A vector whose element is a vector ... named by class, nested too deep.
    let mut class = String::from("org.apache.cassandra.db.marshal.FloatType");
    for _ in 0..40 {
        class = format!("org.apache.cassandra.db.marshal.VectorType({class}, 2)");
    }
    let mut input = vec![0, 0];
    input.extend_from_slice(&(class.len() as u16).to_be_bytes());
    input.extend_from_slice(class.as_bytes());
    assert!(ColumnType::decode(&mut Reader::new(&input)).is_err());
}

#[test]
fn frame_length_fields_at_the_limits() {
    for len in [u32::MAX, (-3i32) as u32, i32::MAX as u32, LIMIT as u32 + 1] {
        let mut f = frame(Opcode::Result, Flags::NONE, 1, &[0, 0, 0, 1]);
        f[5..9].copy_from_slice(&len.to_be_bytes());
        let d = FrameDecoder::new(Direction::Response).with_max_body_len(LIMIT);
        let mut buf = BytesMut::from(&f[..]);
        let (r, s) = measure(|| d.decode(&mut buf));
        assert!(r.is_err(), "length {len:#x} accepted");
        assert_eq!(s.count, 0);
        assert_eq!(buf.len(), f.len(), "the buffer was consumed on error");
    }
    // Exactly at the limit: waits for the body without reserving it.
    let mut f = frame(Opcode::Result, Flags::NONE, 1, &[]);
    f[5..9].copy_from_slice(&(LIMIT as u32).to_be_bytes());
    let d = FrameDecoder::new(Direction::Response).with_max_body_len(LIMIT);
    let mut buf = BytesMut::from(&f[..]);
    let (r, s) = measure(|| d.decode(&mut buf));
    assert!(r.unwrap().is_none());
    assert_eq!(s.count, 0);
}

/// Valid frames to mutate: every golden frame, plus a few built here.
fn seeds() -> Vec<Vec<u8>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut out: Vec<Vec<u8>> = std::fs::read_dir(dir)
        .expect("tests/golden")
        .map(|e| parse_hex(&std::fs::read_to_string(e.expect("entry").path()).expect("read")))
        .collect();
    out.extend([
        frame(Opcode::Ready, Flags::NONE, 0, &[]),
        frame(Opcode::Result, Flags::NONE, 1, &[0, 0, 0, 1]),
        frame(
            Opcode::Error,
            Flags::NONE,
            2,
            &[0, 0, 0x22, 0, 0, 2, b'n', b'o'],
        ),
        // RESULT Rows: global spec ks.t, one int column, one row holding 7.
        frame(
            Opcode::Result,
            Flags::NONE,
            3,
            &[
                0, 0, 0, 2, // Rows
                0, 0, 0, 1, // flags: global tables spec
                0, 0, 0, 1, // columns_count
                0, 2, b'k', b's', 0, 1, b't', // ks, table
                0, 1, b'c', 0, 0x09, // column c: int
                0, 0, 0, 1, // rows_count
                0, 0, 0, 4, 0, 0, 0, 7, // [bytes] 7
            ],
        ),
    ]);
    out.push(frame(
        Opcode::AuthSuccess,
        Flags::NONE,
        4,
        &[0xff, 0xff, 0xff, 0xff],
    ));
    out
}

#[derive(Debug, Clone)]
enum Mutation {
    FlipBit(prop::sample::Index, u8),
    SetInt(prop::sample::Index, i32),
    SetShort(prop::sample::Index, u16),
    Truncate(prop::sample::Index),
    Opcode(u8),
    Insert(prop::sample::Index, u8),
}

fn arb_mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<prop::sample::Index>(), 0u8..8).prop_map(|(i, b)| Mutation::FlipBit(i, b)),
        (
            any::<prop::sample::Index>(),
            prop_oneof![
                Just(-1i32),
                Just(-2),
                Just(-3),
                Just(i32::MAX),
                Just(i32::MIN),
                Just(0x7fff),
                any::<i32>()
            ]
        )
            .prop_map(|(i, v)| Mutation::SetInt(i, v)),
        (
            any::<prop::sample::Index>(),
            prop_oneof![Just(0xffffu16), any::<u16>()]
        )
            .prop_map(|(i, v)| Mutation::SetShort(i, v)),
        any::<prop::sample::Index>().prop_map(Mutation::Truncate),
        (0u8..0x12).prop_map(Mutation::Opcode),
        (any::<prop::sample::Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Insert(i, b)),
    ]
}

fn apply(f: &mut Vec<u8>, m: &Mutation) {
    match m {
        Mutation::FlipBit(i, b) => {
            if f.is_empty() {
                return;
            }
            let i = i.index(f.len());
            f[i] ^= 1 << b;
        }
        Mutation::SetInt(i, v) => {
            if f.len() >= 4 {
                let i = i.index(f.len() - 3);
                f[i..i + 4].copy_from_slice(&v.to_be_bytes());
            }
        }
        Mutation::SetShort(i, v) => {
            if f.len() >= 2 {
                let i = i.index(f.len() - 1);
                f[i..i + 2].copy_from_slice(&v.to_be_bytes());
            }
        }
        Mutation::Truncate(i) => {
            let keep = i.index(f.len() + 1);
            f.truncate(keep);
            // Keep the header's length honest half the time so the body decoder runs.
            if keep >= HEADER_LEN && keep % 2 == 0 {
                let len = (keep - HEADER_LEN) as u32;
                f[5..9].copy_from_slice(&len.to_be_bytes());
            }
        }
        Mutation::Opcode(op) => {
            if f.len() > 4 {
                f[4] = *op;
            }
        }
        Mutation::Insert(i, b) => {
            let i = i.index(f.len() + 1);
            f.insert(i, *b);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_bytes(input in prop::collection::vec(any::<u8>(), 0..512)) {
        feed(&input);
    }

    #[test]
    fn random_bytes_behind_a_valid_header(
        op in 0u8..0x11,
        dir in prop_oneof![Just(0x04u8), Just(0x84u8)],
        body in prop::collection::vec(any::<u8>(), 0..512),
    ) {
        let mut f = vec![dir, 0, 0, 1, op];
        f.extend_from_slice(&(body.len() as u32).to_be_bytes());
        f.extend_from_slice(&body);
        feed(&f);
    }

    #[test]
    fn mutated_valid_frames(
        seed in prop::sample::select(seeds()),
        muts in prop::collection::vec(arb_mutation(), 1..6),
    ) {
        let mut f = seed;
        for m in &muts {
            apply(&mut f, m);
        }
        feed(&f);
    }
}

/// The counter works, so the bounds above are real.
#[test]
fn the_counting_allocator_counts() {
    let (v, s) = measure(|| std::hint::black_box(vec![0u8; 5000]));
    assert_eq!((s.count, s.largest, s.peak_in_use), (1, 5000, 5000));
    drop(v);
}

#[test]
fn lz4_declared_length_is_bounded_by_the_limit() {
    // A 6-byte body that declares LIMIT bytes, and one that declares more.
    for declared in [LIMIT as u32, LIMIT as u32 + 1, u32::MAX] {
        let mut body = declared.to_be_bytes().to_vec();
        body.extend_from_slice(&[0x10, 0x41]);
        let (r, s) = measure(|| Compression::Lz4.decompress(&body, LIMIT));
        assert!(r.is_err());
        assert!(s.largest <= LIMIT, "{declared}: {s:?}");
    }
}

/// lz4 cannot expand a block more than about 255 times, so a body whose declared length
/// is beyond that could be refused before reserving it. doppio-proto reserves the declared
/// length (up to the limit) first: a 6-byte body costs LIMIT bytes. Within the limit, so
/// not a bug, but an amplification worth closing; kept as a record.
#[test]
fn lz4_allocation_tied_to_input_size() {
    let mut body = (LIMIT as u32).to_be_bytes().to_vec();
    body.extend_from_slice(&[0x10, 0x41]);
    let (_, s) = measure(|| Compression::Lz4.decompress(&body, LIMIT));
    assert!(s.largest <= 4096 + 255 * body.len(), "{s:?}");
}

/// A RESULT Rows body with a global table spec of two long names and `n` minimal columns
/// (empty name, type int: 4 bytes each).
fn rows_with_long_global_spec(name_len: usize, n: usize) -> Vec<u8> {
    let mut body = vec![0, 0, 0, 2, 0, 0, 0, 1];
    body.extend_from_slice(&(n as i32).to_be_bytes());
    for _ in 0..2 {
        body.extend_from_slice(&(name_len as u16).to_be_bytes());
        body.extend(std::iter::repeat_n(b'x', name_len));
    }
    for _ in 0..n {
        body.extend_from_slice(&[0, 0, 0, 9]);
    }
    body.extend_from_slice(&[0, 0, 0, 0]);
    body
}

#[test]
fn rows_metadata_with_global_spec_decodes() {
    let body = rows_with_long_global_spec(10, 3);
    let f = Frame {
        header: FrameHeader {
            version: ProtocolVersion::V4,
            direction: Direction::Response,
            flags: Flags::NONE,
            stream: 0,
            opcode: Opcode::Result,
            length: body.len() as u32,
        },
        body: Bytes::from(body),
    };
    let r = ResponseFrame::decode(&f, None, LIMIT).unwrap();
    assert!(format!("{r:?}").contains("xxxxxxxxxx"));
}

/// BUG (doppio-proto metadata.rs `read_col_specs`): with a global table spec, every column
/// gets its own copy of the global keyspace and table names. Columns cost 4 bytes of input
/// each, the names up to 2 x 65535 bytes of memory each: 1000 columns under 30000-byte
/// names (64 KiB of input) hold 60 MB; a 256 MiB frame could ask for terabytes.
#[test]
fn rows_metadata_global_spec_is_not_amplified() {
    let body = rows_with_long_global_spec(30_000, 1000);
    let f = Frame {
        header: FrameHeader {
            version: ProtocolVersion::V4,
            direction: Direction::Response,
            flags: Flags::NONE,
            stream: 0,
            opcode: Opcode::Result,
            length: body.len() as u32,
        },
        body: Bytes::from(body),
    };
    let len = f.body.len();
    let (r, s) = measure(|| ResponseFrame::decode(&f, None, LIMIT));
    assert!(r.is_ok());
    check_bound("global spec rows metadata", len, s);
}

/// A list claiming 2^31-1 elements in 8 bytes, a vector of 1000 text elements in 4 bytes,
/// maps nested in lists: the value decoder reserves no more than the input can hold.
#[test]
fn collection_counts_are_checked_before_reserving() {
    use ColumnType as T;
    let huge = [0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0];
    for t in [
        T::List(Box::new(T::Int)),
        T::Set(Box::new(T::Varchar)),
        T::Map(Box::new(T::Int), Box::new(T::Int)),
        T::Vector {
            element: Box::new(T::Varchar),
            dimension: 1_000_000,
        },
        T::Vector {
            element: Box::new(T::Boolean),
            dimension: u32::MAX,
        },
    ] {
        let (r, s) = measure(|| CqlValue::decode(&t, &huge));
        assert!(r.is_err(), "{t:?} accepted");
        check_bound("collection count", huge.len(), s);
    }
}
