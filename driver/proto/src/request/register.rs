//! REGISTER (spec section 4.1.8): the event types to receive.

use bytes::BytesMut;

use super::body::RequestBody;
use crate::error::Result;
use crate::frame::Opcode;
use crate::version::ProtocolVersion;
use crate::wire;

/// REGISTER: the event types to receive (`TOPOLOGY_CHANGE`, `STATUS_CHANGE`, `SCHEMA_CHANGE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Register<'a> {
    /// Event type names.
    pub events: &'a [&'a str],
}

impl RequestBody for Register<'_> {
    fn opcode(&self) -> Opcode {
        Opcode::Register
    }
    fn encode_body(&self, buf: &mut BytesMut, _: ProtocolVersion) -> Result<()> {
        wire::put_string_list(buf, self.events.iter().copied(), "REGISTER events")
    }
}
