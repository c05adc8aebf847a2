//! PREPARE (spec section 4.1.5): a statement to prepare, and (v5) the keyspace to prepare
//! it in.

use bytes::{BufMut, BytesMut};

use super::body::{v5_only, RequestBody};
use crate::error::Result;
use crate::frame::Opcode;
use crate::version::ProtocolVersion;
use crate::wire;

/// The `<flags>` bits of PREPARE (v5 only).
pub mod prepare_flags {
    /// `<keyspace>` follows.
    pub const WITH_KEYSPACE: u32 = 0x01;
}

/// PREPARE: a statement to prepare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prepare<'a> {
    /// CQL text.
    pub query: &'a str,
    /// v5: the keyspace to prepare in, instead of the connection's.
    pub keyspace: Option<&'a str>,
}

impl RequestBody for Prepare<'_> {
    fn opcode(&self) -> Opcode {
        Opcode::Prepare
    }
    fn encode_body(&self, buf: &mut BytesMut, version: ProtocolVersion) -> Result<()> {
        wire::put_long_string(buf, self.query, "PREPARE query")?;
        if version.has_int_flags() {
            let flags = match self.keyspace {
                Some(_) => prepare_flags::WITH_KEYSPACE,
                None => 0,
            };
            buf.put_u32(flags);
            if let Some(ks) = self.keyspace {
                wire::put_string(buf, ks, "PREPARE keyspace")?;
            }
        } else if self.keyspace.is_some() {
            return Err(v5_only("PREPARE keyspace"));
        }
        Ok(())
    }
}
