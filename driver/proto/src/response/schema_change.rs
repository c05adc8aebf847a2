//! A schema change (spec sections 4.2.5.5 and 4.2.6): what RESULT Schema_change and EVENT
//! SCHEMA_CHANGE both carry, decoded and encoded.

use bytes::BytesMut;

use crate::error::{ProtoError, Result};
use crate::wire::{self, Reader};

/// What a schema change touched (RESULT Schema_change and EVENT SCHEMA_CHANGE).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaTarget {
    /// A keyspace.
    Keyspace(String),
    /// A table: keyspace and name.
    Table(String, String),
    /// A user type: keyspace and name.
    Type(String, String),
    /// A function: keyspace, name, argument types.
    Function(String, String, Vec<String>),
    /// An aggregate: keyspace, name, argument types.
    Aggregate(String, String, Vec<String>),
}

/// A schema change: `CREATED`, `UPDATED` or `DROPPED`, and its target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaChange {
    /// `CREATED`, `UPDATED` or `DROPPED`.
    pub change: String,
    /// What changed.
    pub target: SchemaTarget,
}

impl SchemaChange {
    pub(super) fn decode(r: &mut Reader<'_>) -> Result<Self> {
        let change = r.read_string("schema change type")?.to_owned();
        let target = r.read_string("schema change target")?;
        let mut s = |what| r.read_string(what).map(str::to_owned);
        let target = match target {
            "KEYSPACE" => SchemaTarget::Keyspace(s("keyspace")?),
            "TABLE" => SchemaTarget::Table(s("keyspace")?, s("table")?),
            "TYPE" => SchemaTarget::Type(s("keyspace")?, s("type")?),
            "FUNCTION" | "AGGREGATE" => {
                let ks = s("keyspace")?;
                let name = s("function name")?;
                let args = r
                    .read_string_list("argument types")?
                    .map(str::to_owned)
                    .collect();
                if target == "FUNCTION" {
                    SchemaTarget::Function(ks, name, args)
                } else {
                    SchemaTarget::Aggregate(ks, name, args)
                }
            }
            other => {
                return Err(ProtoError::InvalidValue {
                    what: "schema change target",
                    detail: format!("{other:?}"),
                })
            }
        };
        Ok(Self { change, target })
    }

    pub(super) fn encode(&self, buf: &mut BytesMut) -> Result<()> {
        wire::put_string(buf, &self.change, "schema change type")?;
        let (target, ks, name, args): (&str, &str, Option<&str>, Option<&[String]>) =
            match &self.target {
                SchemaTarget::Keyspace(k) => ("KEYSPACE", k, None, None),
                SchemaTarget::Table(k, t) => ("TABLE", k, Some(t), None),
                SchemaTarget::Type(k, t) => ("TYPE", k, Some(t), None),
                SchemaTarget::Function(k, f, a) => ("FUNCTION", k, Some(f), Some(a)),
                SchemaTarget::Aggregate(k, f, a) => ("AGGREGATE", k, Some(f), Some(a)),
            };
        wire::put_string(buf, target, "schema change target")?;
        wire::put_string(buf, ks, "keyspace")?;
        if let Some(n) = name {
            wire::put_string(buf, n, "name")?;
        }
        if let Some(a) = args {
            wire::put_string_list(buf, a.iter().map(String::as_str), "argument types")?;
        }
        Ok(())
    }
}
