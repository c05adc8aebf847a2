//! doppio-proto hot paths: encode an EXECUTE, decode a one-row RESULT, scan a buffer of
//! back-to-back RESULT frames. Run with `cargo bench -p doppio-proto`.

use std::hint::black_box;

use bytes::BytesMut;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use doppio_proto::consistency::Consistency;
use doppio_proto::frame::{Direction, Flags, FrameDecoder, FrameHeader, FrameStatus, Opcode};
use doppio_proto::request::{encode_request, Execute, ExecuteTemplate, QueryParameters};
use doppio_proto::wire::RawValue;

/// A RESULT Rows frame: one int column, one row.
fn one_row_result(stream: i16) -> Vec<u8> {
    let body: &[u8] = &[
        0, 0, 0, 2, // Rows
        0, 0, 0, 1, // global tables spec
        0, 0, 0, 1, // one column
        0, 2, b'k', b's', 0, 1, b't', // ks.t
        0, 1, b'v', 0, 0x09, // v int
        0, 0, 0, 1, // one row
        0, 0, 0, 4, 0, 0, 0, 42, // 42
    ];
    let mut out = FrameHeader {
        direction: Direction::Response,
        flags: Flags::NONE,
        stream,
        opcode: Opcode::Result,
        length: body.len() as u32,
    }
    .to_bytes()
    .to_vec();
    out.extend_from_slice(body);
    out
}

fn scan(c: &mut Criterion) {
    let mut buf = Vec::with_capacity(64 * 1024);
    let mut stream = 0i16;
    loop {
        let f = one_row_result(stream);
        if buf.len() + f.len() > 64 * 1024 {
            break;
        }
        buf.extend_from_slice(&f);
        stream = stream.wrapping_add(1);
    }
    let decoder = FrameDecoder::new(Direction::Response);
    let mut g = c.benchmark_group("scan");
    g.throughput(Throughput::Bytes(buf.len() as u64));
    g.bench_function("64KiB_result_frames_check", |b| {
        b.iter(|| {
            let mut rest = black_box(&buf[..]);
            let mut n = 0u32;
            while let Ok(FrameStatus::Complete { frame_len, .. }) = decoder.check(rest) {
                rest = &rest[frame_len..];
                n += 1;
            }
            n
        })
    });
    g.bench_function("64KiB_result_frames_split", |b| {
        let mut bm = BytesMut::with_capacity(buf.len());
        b.iter(|| {
            bm.clear();
            bm.extend_from_slice(&buf);
            let mut n = 0u32;
            while let Ok(Some(f)) = decoder.decode(&mut bm) {
                black_box(&f);
                n += 1;
            }
            n
        })
    });
    g.finish();
}

fn encode_execute(c: &mut Criterion) {
    let id = [0x5a; 16];
    let params = QueryParameters {
        consistency: Consistency::LocalQuorum,
        skip_metadata: true,
        ..Default::default()
    };
    let k = 42i64.to_be_bytes();
    let values = [RawValue::Bytes(&k), RawValue::Bytes(b"some text value")];
    let template = ExecuteTemplate::new(&id, 2, &params, Flags::NONE).expect("template");
    let mut buf = BytesMut::with_capacity(4096);
    let mut g = c.benchmark_group("encode_execute_2_values");
    g.bench_function("template", |b| {
        b.iter(|| {
            buf.clear();
            template
                .encode(&mut buf, black_box(7), black_box(&values[..]), None)
                .expect("encode");
            buf.len()
        })
    });
    let execute = Execute {
        id: &id,
        params,
        values: &values[..],
        columns: None,
    };
    g.bench_function("plain", |b| {
        b.iter(|| {
            buf.clear();
            encode_request(&mut buf, black_box(7), Flags::NONE, black_box(&execute))
                .expect("encode");
            buf.len()
        })
    });
    g.finish();
}

criterion_group!(benches, encode_execute, scan);
criterion_main!(benches);
