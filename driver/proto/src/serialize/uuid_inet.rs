//! UUIDs and addresses as CQL values: `[u8; 16]`, [`CqlUuid`] and `uuid::Uuid` (as `uuid`,
//! or checked, `timeuuid`), and IPv4, IPv6 and `IpAddr` (as `inet`).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use bytes::{BufMut, BytesMut};

use super::macros::scalar;
use super::value_trait::{mismatch, SerializeValue};
use crate::types::ColumnType;
use crate::value::{check_timeuuid, CqlUuid, ValueResult};

scalar!([u8; 16], ColumnType::Uuid, |v, typ, buf| {
    ColumnType::Uuid => buf.put_slice(v),
    ColumnType::Timeuuid => {
        check_timeuuid(v)?;
        buf.put_slice(v)
    },
});
impl SerializeValue for CqlUuid {
    fn natural_type(&self) -> ColumnType {
        ColumnType::Uuid
    }
    fn write(&self, typ: &ColumnType, buf: &mut BytesMut) -> ValueResult<()> {
        match typ {
            ColumnType::Uuid | ColumnType::Timeuuid => self.0.write(typ, buf),
            _ => Err(mismatch::<Self>(typ)),
        }
    }
}

scalar!(Ipv4Addr, ColumnType::Inet, |v, typ, buf| { ColumnType::Inet => buf.put_slice(&v.octets()) });
scalar!(Ipv6Addr, ColumnType::Inet, |v, typ, buf| { ColumnType::Inet => buf.put_slice(&v.octets()) });

/// `uuid::Uuid` as a `uuid` (or, when it is a version-1 UUID, a `timeuuid`).
#[cfg(feature = "uuid")]
impl SerializeValue for uuid::Uuid {
    fn natural_type(&self) -> ColumnType {
        ColumnType::Uuid
    }
    fn write(&self, typ: &ColumnType, buf: &mut BytesMut) -> ValueResult<()> {
        match typ {
            ColumnType::Uuid | ColumnType::Timeuuid => self.as_bytes().write(typ, buf),
            _ => Err(mismatch::<Self>(typ)),
        }
    }
}

impl SerializeValue for IpAddr {
    fn natural_type(&self) -> ColumnType {
        ColumnType::Inet
    }
    fn write(&self, typ: &ColumnType, buf: &mut BytesMut) -> ValueResult<()> {
        match self {
            IpAddr::V4(a) => a.write(typ, buf),
            IpAddr::V6(a) => a.write(typ, buf),
        }
    }
}
