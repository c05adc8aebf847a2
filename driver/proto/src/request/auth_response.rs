//! AUTH_RESPONSE (spec section 4.1.2): a SASL token.

use bytes::BytesMut;

use super::body::RequestBody;
use crate::error::Result;
use crate::frame::Opcode;
use crate::version::ProtocolVersion;
use crate::wire;

/// AUTH_RESPONSE: a SASL token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuthResponse<'a> {
    /// The token (`None` is a null `[bytes]`).
    pub token: Option<&'a [u8]>,
}

impl RequestBody for AuthResponse<'_> {
    fn opcode(&self) -> Opcode {
        Opcode::AuthResponse
    }
    fn encode_body(&self, buf: &mut BytesMut, _: ProtocolVersion) -> Result<()> {
        wire::put_bytes(buf, self.token, "AUTH_RESPONSE token")
    }
}
