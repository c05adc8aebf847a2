//! Protocol v5 segments: any bytes (the first picks lz4 when odd) as a stream of segments,
//! checked, unwrapped and assembled into envelopes; never a panic, every segment within its
//! limit and equal to itself re-encoded.
#![no_main]

use protocol_tests::fuzz_checks as checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::segments(data));
