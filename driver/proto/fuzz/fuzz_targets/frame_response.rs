//! Frame decoder + response decoding: any bytes, read as a stream of response frames,
//! never panic; every frame the decoder yields is within its body limit.
#![no_main]

use bytes::BytesMut;
use doppio_proto::compression::Compression;
use doppio_proto::frame::{Direction, Flags, FrameDecoder};
use doppio_proto::types::ColumnType;
use doppio_proto::wire::Reader;
use libfuzzer_sys::fuzz_target;

const LIMIT: usize = 1 << 20;

fuzz_target!(|data: &[u8]| {
    let decoder = FrameDecoder::new(Direction::Response).with_max_body_len(LIMIT);
    let mut buf = BytesMut::from(data);
    while let Ok(Some(frame)) = decoder.decode(&mut buf) {
        assert!(frame.body.len() <= LIMIT);
        assert_eq!(frame.body.len(), frame.header.length as usize);
        decode_response(&frame);
    }
    let _ = ColumnType::decode(&mut Reader::new(data));
});

fn decode_response(frame: &doppio_proto::frame::Frame) {
    let body = if frame.header.flags.contains(Flags::COMPRESSION) {
        match Compression::Lz4.decompress(&frame.body, LIMIT) {
            Ok(plain) => {
                assert!(plain.len() <= LIMIT);
                plain
            }
            Err(_) => return,
        }
    } else {
        frame.body.clone()
    };
    let _ = body;
}
