//! Frame decoder + request decoding, the server's side (the stub reads client frames with
//! it): any bytes, read as a stream of request frames, never panic; every frame the decoder
//! yields is within its body limit.
#![no_main]

use protocol_tests::fuzz_checks as checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::frame_request(data));
