//! The CQL name of a type (`map<text, int>`), for messages.

use crate::types::ColumnType;

/// The CQL name of a type (`map<text, int>`), for messages.
pub fn type_name(typ: &ColumnType) -> String {
    match typ {
        ColumnType::Custom(c) => format!("'{c}'"),
        ColumnType::Ascii => "ascii".into(),
        ColumnType::Bigint => "bigint".into(),
        ColumnType::Blob => "blob".into(),
        ColumnType::Boolean => "boolean".into(),
        ColumnType::Counter => "counter".into(),
        ColumnType::Decimal => "decimal".into(),
        ColumnType::Double => "double".into(),
        ColumnType::Float => "float".into(),
        ColumnType::Int => "int".into(),
        ColumnType::Timestamp => "timestamp".into(),
        ColumnType::Uuid => "uuid".into(),
        ColumnType::Varchar => "text".into(),
        ColumnType::Varint => "varint".into(),
        ColumnType::Timeuuid => "timeuuid".into(),
        ColumnType::Inet => "inet".into(),
        ColumnType::Date => "date".into(),
        ColumnType::Time => "time".into(),
        ColumnType::Smallint => "smallint".into(),
        ColumnType::Tinyint => "tinyint".into(),
        ColumnType::Duration => "duration".into(),
        ColumnType::List(t) => format!("list<{}>", type_name(t)),
        ColumnType::Set(t) => format!("set<{}>", type_name(t)),
        ColumnType::Map(k, v) => format!("map<{}, {}>", type_name(k), type_name(v)),
        ColumnType::Tuple(ts) => {
            format!(
                "tuple<{}>",
                ts.iter().map(type_name).collect::<Vec<_>>().join(", ")
            )
        }
        ColumnType::Udt { keyspace, name, .. } => format!("{keyspace}.{name}"),
        ColumnType::Vector { element, dimension } => {
            format!("vector<{}, {dimension}>", type_name(element))
        }
    }
}
