//! STARTUP (spec section 4.1.1): the connection's options.

use bytes::BytesMut;

use super::body::RequestBody;
use crate::error::Result;
use crate::frame::Opcode;
use crate::version::ProtocolVersion;
use crate::wire;

/// STARTUP: the connection's options (`CQL_VERSION`, optionally `COMPRESSION`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Startup<'a> {
    /// Option pairs, written as a `[string map]`.
    pub options: &'a [(&'a str, &'a str)],
}

impl RequestBody for Startup<'_> {
    fn opcode(&self) -> Opcode {
        Opcode::Startup
    }
    fn encode_body(&self, buf: &mut BytesMut, _: ProtocolVersion) -> Result<()> {
        wire::put_string_map(buf, self.options, "STARTUP options")
    }
}
