//! Frame decoder + response decoding: any bytes, read as a stream of response frames,
//! never panic; every frame the decoder yields is within its body limit.
#![no_main]

use bytes::BytesMut;
use doppio_proto::compression::Compression;
use doppio_proto::frame::{Direction, Flags, FrameDecoder};
use doppio_proto::response::{encode_response, Envelope, ResponseFrame};
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
    let decoded_frame = doppio_proto::frame::Frame {
        header: doppio_proto::frame::FrameHeader {
            flags: frame.header.flags.without(Flags::COMPRESSION),
            length: body.len() as u32,
            ..frame.header
        },
        body,
    };
    if let Ok(decoded) = ResponseFrame::decode(&decoded_frame, None, LIMIT) {
        // Whatever decodes must encode again and decode to the same message.
        let warnings: Vec<&str> = decoded.warnings.iter().map(String::as_str).collect();
        let payload: Option<Vec<(&str, Option<&[u8]>)>> = decoded
            .custom_payload
            .as_ref()
            .map(|p| p.iter().map(|(k, v)| (k.as_str(), v.as_deref())).collect());
        let envelope = Envelope {
            tracing_id: decoded.tracing_id,
            warnings: &warnings,
            custom_payload: payload.as_deref(),
        };
        let mut out = BytesMut::new();
        if encode_response(&mut out, decoded.stream, &envelope, &decoded.response, None).is_ok() {
            let again = FrameDecoder::new(Direction::Response)
                .decode(&mut out)
                .expect("re-encoded frame is valid")
                .expect("re-encoded frame is whole");
            let back = ResponseFrame::decode(&again, None, usize::MAX).expect("re-decodes");
            assert_eq!(back, decoded);
        }
    }
}
