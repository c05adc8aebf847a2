//! The type the bench encodes for a scylla column type ([`kind_of`]).

use std::sync::Arc;

use scylla::frame::response::result::{CollectionType, ColumnType, NativeType};

use crate::workload::encode::{CqlKind, CqlType, UdtType};

/// The type the bench encodes for a scylla column type: composites recursively.
pub(crate) fn kind_of(t: &ColumnType<'_>) -> CqlType {
    match t {
        ColumnType::Native(n) => CqlType::Scalar(native_kind_of(n)),
        ColumnType::Collection { typ, .. } => match typ {
            CollectionType::List(e) => CqlType::List(Arc::new(kind_of(e))),
            CollectionType::Set(e) => CqlType::Set(Arc::new(kind_of(e))),
            CollectionType::Map(k, v) => CqlType::Map(Arc::new((kind_of(k), kind_of(v)))),
            _ => CqlType::Scalar(CqlKind::Other),
        },
        ColumnType::Tuple(ts) => CqlType::Tuple(ts.iter().map(kind_of).collect()),
        ColumnType::UserDefinedType { definition, .. } => CqlType::Udt(Arc::new(UdtType {
            name: definition.name.to_string(),
            fields: definition
                .field_types
                .iter()
                .map(|(n, t)| (n.to_string(), kind_of(t)))
                .collect(),
        })),
        ColumnType::Vector { typ, dimensions } => {
            CqlType::Vector(Arc::new(kind_of(typ)), u32::from(*dimensions))
        }
        _ => CqlType::Scalar(CqlKind::Other),
    }
}

fn native_kind_of(n: &NativeType) -> CqlKind {
    match n {
        NativeType::Ascii => CqlKind::Ascii,
        NativeType::Boolean => CqlKind::Boolean,
        NativeType::Blob => CqlKind::Blob,
        NativeType::Counter => CqlKind::Counter,
        NativeType::Date => CqlKind::Date,
        NativeType::Double => CqlKind::Double,
        NativeType::Float => CqlKind::Float,
        NativeType::Int => CqlKind::Int,
        NativeType::BigInt => CqlKind::BigInt,
        NativeType::Text => CqlKind::Text,
        NativeType::Timestamp => CqlKind::Timestamp,
        NativeType::SmallInt => CqlKind::SmallInt,
        NativeType::TinyInt => CqlKind::TinyInt,
        NativeType::Time => CqlKind::Time,
        NativeType::Timeuuid => CqlKind::TimeUuid,
        NativeType::Uuid => CqlKind::Uuid,
        NativeType::Varint => CqlKind::Varint,
        _ => CqlKind::Other,
    }
}
