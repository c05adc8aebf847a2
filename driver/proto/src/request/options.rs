//! OPTIONS (spec section 4.1.3): asks which options the server supports.

use bytes::BytesMut;

use super::body::RequestBody;
use crate::error::Result;
use crate::frame::Opcode;
use crate::version::ProtocolVersion;

/// OPTIONS: asks which options the server supports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Options;

impl RequestBody for Options {
    fn opcode(&self) -> Opcode {
        Opcode::Options
    }
    fn encode_body(&self, _: &mut BytesMut, _: ProtocolVersion) -> Result<()> {
        Ok(())
    }
}
