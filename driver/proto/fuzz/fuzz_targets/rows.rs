//! Row reader: any bytes as a RESULT body; when it decodes as Rows, every row is walked
//! with the lazy reader and every cell decoded as a dynamic value and through the typed
//! reader. Never panics.
#![no_main]

use bytes::Bytes;
use doppio_proto::frame::{Direction, Flags, Frame, FrameHeader, Opcode};
use doppio_proto::response::{Response, ResponseFrame, ResultBody};
use doppio_proto::value::CqlValue;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let frame = Frame {
        header: FrameHeader {
            direction: Direction::Response,
            flags: Flags::NONE,
            stream: 0,
            opcode: Opcode::Result,
            length: data.len() as u32,
        },
        body: Bytes::copy_from_slice(data),
    };
    let Ok(decoded) = ResponseFrame::decode(&frame, None, 1 << 20) else {
        return;
    };
    let Response::Result(ResultBody::Rows(rows)) = decoded.response else {
        return;
    };
    // Bound the walk: a zero-column result may claim 2^31 empty rows.
    for row in rows.iter().take(4096) {
        let Ok(row) = row else { break };
        assert_eq!(row.len(), rows.metadata.columns_count);
        for (i, cell) in row.cells().enumerate() {
            if let (Some(col), Some(bytes)) = (rows.columns().get(i), cell) {
                if let Ok(v) = CqlValue::decode(&col.typ, bytes) {
                    // A decoded value encodes again.
                    let mut out = Vec::new();
                    let _ = v.encode(&col.typ, &mut out);
                }
            }
            let _ = row.get::<Option<CqlValue>>(i);
        }
        let _ = row.to_values();
    }
    if let Ok(typed) = rows.typed::<(Option<i32>, Option<&str>)>() {
        for r in typed.take(4096) {
            let _ = r;
        }
    }
});
