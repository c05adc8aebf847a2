//! doppio-proto hot paths: encode an EXECUTE, decode a one-row RESULT, scan a buffer of
//! back-to-back RESULT frames. Run with `cargo bench -p doppio-proto`.

use std::hint::black_box;

use bytes::{Bytes, BytesMut};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use doppio_proto::consistency::Consistency;
use doppio_proto::frame::Frame;
use doppio_proto::frame::{Direction, Flags, FrameDecoder, FrameHeader, FrameStatus, Opcode};
use doppio_proto::request::{encode_request, Execute, ExecuteTemplate, QueryParameters};
use doppio_proto::response::{Response, ResponseFrame, ResultBody};
use doppio_proto::wire::{RawValue, Reader};
use doppio_proto::{MetadataIds, ProtocolVersion};

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
        version: ProtocolVersion::V4,
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

/// The same one-row RESULT as a `skip_metadata` EXECUTE gets it: NO_METADATA.
fn one_row_result_no_metadata(stream: i16) -> Vec<u8> {
    let body: &[u8] = &[
        0, 0, 0, 2, // Rows
        0, 0, 0, 4, // no metadata
        0, 0, 0, 1, // one column
        0, 0, 0, 1, // one row
        0, 0, 0, 4, 0, 0, 0, 42, // 42
    ];
    let mut out = FrameHeader {
        version: ProtocolVersion::V4,
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

/// A one-row RESULT shaped like the bench's `read` workload answers a `skip_metadata`
/// EXECUTE: NO_METADATA, a bigint and a 64-byte blob (105 bytes with its header).
fn read_workload_result(stream: i16) -> Vec<u8> {
    let mut body: Vec<u8> = vec![
        0, 0, 0, 2, // Rows
        0, 0, 0, 4, // no metadata
        0, 0, 0, 2, // two columns
        0, 0, 0, 1, // one row
        0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 42, // id bigint
        0, 0, 0, 64, // value blob(64)
    ];
    body.extend_from_slice(&[0xab; 64]);
    let mut out = FrameHeader {
        version: ProtocolVersion::V4,
        direction: Direction::Response,
        flags: Flags::NONE,
        stream,
        opcode: Opcode::Result,
        length: body.len() as u32,
    }
    .to_bytes()
    .to_vec();
    out.extend_from_slice(&body);
    out
}

/// Reads the first cell of a decoded one-row RESULT as a big-endian integer.
fn first_cell(r: ResponseFrame) -> i64 {
    let Response::Result(ResultBody::Rows(rows)) = r.response else {
        panic!("rows expected")
    };
    let cell = Reader::new(&rows.content)
        .read_bytes("v")
        .expect("cell")
        .expect("not null");
    cell.iter().fold(0i64, |acc, b| (acc << 8) | i64::from(*b))
}

/// Frames the header at the start of `buf`, decodes the RESULT and reads its one int.
/// Returns the frame's length and the value.
fn decode_one(decoder: &FrameDecoder, buf: &Bytes) -> (usize, i32) {
    let Ok(FrameStatus::Complete { header, frame_len }) = decoder.check(buf) else {
        panic!("whole frame expected")
    };
    let frame = Frame {
        header,
        body: buf.slice(9..frame_len),
    };
    let r = ResponseFrame::decode(&frame, None, usize::MAX).expect("RESULT");
    let Response::Result(ResultBody::Rows(rows)) = r.response else {
        panic!("rows expected")
    };
    let cell = Reader::new(&rows.content)
        .read_bytes("v")
        .expect("cell")
        .expect("not null");
    let v = i32::from_be_bytes(cell.try_into().expect("int"));
    (frame_len, v)
}

fn decode_result(c: &mut Criterion) {
    let decoder = FrameDecoder::new(Direction::Response);
    let mut g = c.benchmark_group("decode_one_row_result");
    let full = Bytes::from(one_row_result(1));
    g.bench_function("with_metadata", |b| {
        b.iter(|| decode_one(&decoder, black_box(&full)))
    });
    let bare = Bytes::from(one_row_result_no_metadata(1));
    g.bench_function("no_metadata", |b| {
        b.iter(|| decode_one(&decoder, black_box(&bare)))
    });
    g.finish();
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
    let template = ExecuteTemplate::new(
        ProtocolVersion::V4,
        MetadataIds::ByVersion,
        &id,
        None,
        2,
        &params,
        Flags::NONE,
    )
    .expect("template");
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
        result_metadata_id: None,
        metadata_ids: MetadataIds::ByVersion,
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

fn scan_decode(c: &mut Criterion) {
    let decoder = FrameDecoder::new(Direction::Response);
    let mut g = c.benchmark_group("scan");
    for (name, make) in [
        (
            "64KiB_decode_results_with_metadata",
            one_row_result as fn(i16) -> Vec<u8>,
        ),
        (
            "64KiB_decode_results_no_metadata",
            one_row_result_no_metadata,
        ),
    ] {
        let mut buf = Vec::with_capacity(64 * 1024);
        let mut stream = 0i16;
        loop {
            let f = make(stream);
            if buf.len() + f.len() > 64 * 1024 {
                break;
            }
            buf.extend_from_slice(&f);
            stream = stream.wrapping_add(1);
        }
        let buf = Bytes::from(buf);
        g.throughput(Throughput::Bytes(buf.len() as u64));
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut rest = buf.clone();
                let mut sum = 0i64;
                while !rest.is_empty() {
                    let (len, v) = decode_one(&decoder, &rest);
                    sum += i64::from(v);
                    rest = rest.slice(len..);
                }
                sum
            })
        });
    }
    // The driver's reader: frames split off a BytesMut read buffer, each decoded.
    for (name, make) in [
        (
            "64KiB_split_decode_results_no_metadata",
            one_row_result_no_metadata as fn(i16) -> Vec<u8>,
        ),
        (
            "64KiB_split_decode_read_workload_results",
            read_workload_result,
        ),
    ] {
        let mut buf = Vec::with_capacity(64 * 1024);
        let mut stream = 0i16;
        loop {
            let f = make(stream);
            if buf.len() + f.len() > 64 * 1024 {
                break;
            }
            buf.extend_from_slice(&f);
            stream = stream.wrapping_add(1);
        }
        g.throughput(Throughput::Bytes(buf.len() as u64));
        let mut bm = BytesMut::with_capacity(buf.len());
        g.bench_function(name, |b| {
            b.iter(|| {
                bm.clear();
                bm.extend_from_slice(&buf);
                let mut sum = 0i64;
                while let Ok(Some(frame)) = decoder.decode(&mut bm) {
                    let r = ResponseFrame::decode(&frame, None, usize::MAX).expect("RESULT");
                    sum = sum.wrapping_add(first_cell(r));
                }
                sum
            })
        });
    }
    g.finish();
}

criterion_group!(benches, encode_execute, decode_result, scan, scan_decode);
criterion_main!(benches);
