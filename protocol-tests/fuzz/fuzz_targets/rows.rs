//! Row reader: any bytes as a RESULT body; when it decodes as Rows, every row is walked
//! with the lazy reader and every cell decoded as a dynamic value and through the typed
//! reader. Never panics.
#![no_main]

use protocol_tests::fuzz_checks as checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::rows(data));
