//! Frame decoder + request decoding, the server's side (the stub reads client frames with
//! it): any bytes, read as a stream of request frames, never panic; every frame the decoder
//! yields is within its body limit.
#![no_main]

use bytes::BytesMut;
use doppio_proto::compression::Compression;
use doppio_proto::frame::{Direction, Flags, FrameDecoder};
use doppio_proto::request::Request;
use libfuzzer_sys::fuzz_target;

const LIMIT: usize = 1 << 20;

fuzz_target!(|data: &[u8]| {
    let decoder = FrameDecoder::new(Direction::Request).with_max_body_len(LIMIT);
    let mut buf = BytesMut::from(data);
    while let Ok(Some(frame)) = decoder.decode(&mut buf) {
        assert!(frame.body.len() <= LIMIT);
        assert_eq!(frame.body.len(), frame.header.length as usize);
        let body = if frame.header.flags.contains(Flags::COMPRESSION) {
            match Compression::Lz4.decompress(&frame.body, LIMIT) {
                Ok(plain) => {
                    assert!(plain.len() <= LIMIT);
                    plain
                }
                Err(_) => continue,
            }
        } else {
            frame.body.clone()
        };
        let _ = Request::decode(&frame.header, &body);
    }
});
