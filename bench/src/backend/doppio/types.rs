//! The type the bench encodes for a doppio column type ([`kind_of`]).

use std::sync::Arc;

use doppio_driver::proto::types::ColumnType;

use crate::workload::encode::{CqlKind, CqlType, UdtType};

/// The type the bench encodes for a doppio column type: composites recursively (doppio
/// reads a v4 `VectorType(...)` custom type as a vector).
pub(crate) fn kind_of(t: &ColumnType) -> CqlType {
    match t {
        ColumnType::List(e) => CqlType::List(Arc::new(kind_of(e))),
        ColumnType::Set(e) => CqlType::Set(Arc::new(kind_of(e))),
        ColumnType::Map(k, v) => CqlType::Map(Arc::new((kind_of(k), kind_of(v)))),
        ColumnType::Tuple(ts) => CqlType::Tuple(ts.iter().map(kind_of).collect()),
        ColumnType::Udt { name, fields, .. } => CqlType::Udt(Arc::new(UdtType {
            name: name.clone(),
            fields: fields
                .iter()
                .map(|(n, t)| (n.clone(), kind_of(t)))
                .collect(),
        })),
        ColumnType::Vector { element, dimension } => {
            CqlType::Vector(Arc::new(kind_of(element)), *dimension)
        }
        t => CqlType::Scalar(scalar_kind_of(t)),
    }
}

fn scalar_kind_of(t: &ColumnType) -> CqlKind {
    match t {
        ColumnType::Ascii => CqlKind::Ascii,
        ColumnType::Bigint => CqlKind::BigInt,
        ColumnType::Blob => CqlKind::Blob,
        ColumnType::Boolean => CqlKind::Boolean,
        ColumnType::Counter => CqlKind::Counter,
        ColumnType::Double => CqlKind::Double,
        ColumnType::Float => CqlKind::Float,
        ColumnType::Int => CqlKind::Int,
        ColumnType::Timestamp => CqlKind::Timestamp,
        ColumnType::Uuid => CqlKind::Uuid,
        ColumnType::Varchar => CqlKind::Text,
        ColumnType::Varint => CqlKind::Varint,
        ColumnType::Timeuuid => CqlKind::TimeUuid,
        ColumnType::Date => CqlKind::Date,
        ColumnType::Time => CqlKind::Time,
        ColumnType::Smallint => CqlKind::SmallInt,
        ColumnType::Tinyint => CqlKind::TinyInt,
        _ => CqlKind::Other,
    }
}
