//! Schema changes: `ALTER TABLE [ks.]t ADD name type` and `ALTER TABLE [ks.]t DROP name`
//! change the columns a SELECT of that table answers with. A table starts as the configured
//! shape has it (one blob column `v`); once altered, every SELECT of it answers all its
//! columns, each row the shape's blob in `v` and a value of its own in every added column
//! ([`filler`]). The system tables cannot be altered.
//!
//! A node drops nothing prepared when a table changes (Cassandra keeps its statements;
//! ScyllaDB drops them, and the first client to prepare one again, any client, brings it
//! back with the new columns: the same state for every other client). What a client that
//! still holds the old columns then gets is the point: `METADATA_CHANGED` where its
//! connection carries result metadata ids, rows it would read by stale columns elsewhere.

use std::sync::Arc;

use doppio_proto::metadata::ColumnSpec;
use doppio_proto::types::ColumnType;
use doppio_proto::value::CqlValue;

use crate::answer::rows::Row;

/// What an `ALTER TABLE` does to its table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Change {
    /// Adds the column (lower-cased name) of this type.
    Add(String, ColumnType),
    /// Drops the column.
    Drop(String),
}

/// An `ALTER TABLE` the stub applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Alter<'a> {
    /// The keyspace, if the table name is qualified.
    pub(super) keyspace: Option<&'a str>,
    /// The table.
    pub(super) table: &'a str,
    /// What changes.
    pub(super) change: Change,
}

/// The type of a column named in CQL, of those the stub fills ([`filler`]).
fn column_type(name: &str) -> Option<ColumnType> {
    Some(match name.to_ascii_lowercase().as_str() {
        "ascii" => ColumnType::Ascii,
        "bigint" => ColumnType::Bigint,
        "blob" => ColumnType::Blob,
        "boolean" => ColumnType::Boolean,
        "double" => ColumnType::Double,
        "float" => ColumnType::Float,
        "int" => ColumnType::Int,
        "smallint" => ColumnType::Smallint,
        "tinyint" => ColumnType::Tinyint,
        "text" | "varchar" => ColumnType::Varchar,
        "uuid" => ColumnType::Uuid,
        _ => return None,
    })
}

/// Parses `ALTER TABLE [ks.]t ADD name type` or `... DROP name` (an optional `;` ends it);
/// `None` for any other statement, an error (worded for the client) for an `ALTER TABLE`
/// the stub cannot apply.
pub(super) fn parse_alter(cql: &str) -> Option<Result<Alter<'_>, String>> {
    let mut words = cql
        .trim()
        .trim_end_matches(';')
        .split_whitespace()
        .map(|w| w.trim_matches('"'));
    let alter = words.next()?;
    let table = words.next()?;
    if !alter.eq_ignore_ascii_case("alter") || !table.eq_ignore_ascii_case("table") {
        return None;
    }
    let Some(name) = words.next() else {
        return Some(Err("ALTER TABLE names no table".into()));
    };
    let (keyspace, table) = match name.split_once('.') {
        Some((k, t)) => (Some(k.trim_matches('"')), t.trim_matches('"')),
        None => (None, name),
    };
    let op = words.next().unwrap_or("");
    let column = words.next().map(str::to_ascii_lowercase);
    let typ = words.next();
    let rest = words.next();
    let change = match (op.to_ascii_lowercase().as_str(), column, typ, rest) {
        ("add", Some(c), Some(t), None) => match column_type(t) {
            Some(typ) => Change::Add(c, typ),
            None => return Some(Err(format!("the stub cannot add a column of type {t}"))),
        },
        ("drop", Some(c), None, None) => Change::Drop(c),
        _ => {
            return Some(Err(format!(
                "the stub alters a table by ADD name type or DROP name only: {cql}"
            )))
        }
    };
    Some(Ok(Alter {
        keyspace,
        table,
        change,
    }))
}

/// A table whose columns an `ALTER TABLE` changed.
#[derive(Debug)]
struct AlteredTable {
    keyspace: String,
    table: String,
    columns: Vec<(String, ColumnType)>,
}

/// The tables one responder has seen altered (none at first: every table is the shape's).
#[derive(Debug, Default)]
pub(super) struct Schema {
    tables: Vec<AlteredTable>,
}

/// The one column of a table the shape answers for: `v blob`.
fn shape_columns() -> Vec<(String, ColumnType)> {
    vec![("v".to_owned(), ColumnType::Blob)]
}

impl Schema {
    fn find(&self, keyspace: &str, table: &str) -> Option<&AlteredTable> {
        self.tables.iter().find(|t| {
            t.keyspace.eq_ignore_ascii_case(keyspace) && t.table.eq_ignore_ascii_case(table)
        })
    }

    /// Applies `alter` to `keyspace.table` (the keyspace resolved by the caller); an error,
    /// worded for the client, when the column to add is there already or the one to drop
    /// is not, or it is the last.
    pub(super) fn apply(&mut self, keyspace: &str, alter: &Alter<'_>) -> Result<(), String> {
        let at = match self.tables.iter().position(|t| {
            t.keyspace.eq_ignore_ascii_case(keyspace) && t.table.eq_ignore_ascii_case(alter.table)
        }) {
            Some(at) => at,
            None => {
                self.tables.push(AlteredTable {
                    keyspace: keyspace.to_owned(),
                    table: alter.table.to_owned(),
                    columns: shape_columns(),
                });
                self.tables.len() - 1
            }
        };
        let columns = &mut self.tables[at].columns;
        let position = |name: &str| columns.iter().position(|(c, _)| c == name);
        match &alter.change {
            Change::Add(name, typ) => {
                if position(name).is_some() {
                    return Err(format!(
                        "column {name} already exists in {keyspace}.{}",
                        alter.table
                    ));
                }
                columns.push((name.clone(), typ.clone()));
            }
            Change::Drop(name) => {
                let Some(i) = position(name) else {
                    return Err(format!(
                        "column {name} was not found in {keyspace}.{}",
                        alter.table
                    ));
                };
                if columns.len() == 1 {
                    return Err(format!(
                        "cannot drop the last column of {keyspace}.{}",
                        alter.table
                    ));
                }
                columns.remove(i);
            }
        }
        Ok(())
    }

    /// The columns and the one row value of each that a SELECT of `keyspace.table` answers
    /// with: the shape's `v` (whose value is `blob`) unless the table was altered.
    pub(super) fn columns(
        &self,
        keyspace: &str,
        table: &str,
        blob: &[u8],
    ) -> (Vec<ColumnSpec>, Row) {
        let ks: Arc<str> = keyspace.into();
        let tn: Arc<str> = table.into();
        let columns = match self.find(keyspace, table) {
            Some(t) => t.columns.clone(),
            None => shape_columns(),
        };
        columns
            .into_iter()
            .map(|(name, typ)| {
                let value = if name == "v" && typ == ColumnType::Blob {
                    Some(CqlValue::Blob(blob.to_vec()))
                } else {
                    filler(&name, &typ)
                };
                let spec = ColumnSpec {
                    keyspace: ks.clone(),
                    table: tn.clone(),
                    name,
                    typ,
                };
                (spec, value)
            })
            .unzip()
    }
}

/// The value every row has in an added column `name` of type `typ`: its name (text and
/// blob), 42 (every integer type), 0.5, true, or a UUID of 0x42 bytes; a value a client can
/// tell from any other type's.
pub(super) fn filler(name: &str, typ: &ColumnType) -> Option<CqlValue> {
    Some(match typ {
        ColumnType::Ascii => CqlValue::Ascii(name.to_owned()),
        ColumnType::Varchar => CqlValue::Text(name.to_owned()),
        ColumnType::Blob => CqlValue::Blob(name.as_bytes().to_vec()),
        ColumnType::Bigint => CqlValue::Bigint(42),
        ColumnType::Int => CqlValue::Int(42),
        ColumnType::Smallint => CqlValue::Smallint(42),
        ColumnType::Tinyint => CqlValue::Tinyint(42),
        ColumnType::Boolean => CqlValue::Boolean(true),
        ColumnType::Double => CqlValue::Double(0.5),
        ColumnType::Float => CqlValue::Float(0.5),
        ColumnType::Uuid => CqlValue::Uuid([0x42; 16]),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alter_table_is_parsed_as_drivers_write_it() {
        assert_eq!(
            parse_alter("ALTER TABLE ks.t ADD w int;"),
            Some(Ok(Alter {
                keyspace: Some("ks"),
                table: "t",
                change: Change::Add("w".into(), ColumnType::Int),
            }))
        );
        assert_eq!(
            parse_alter("  alter table \"t\" drop V"),
            Some(Ok(Alter {
                keyspace: None,
                table: "t",
                change: Change::Drop("v".into()),
            }))
        );
        assert_eq!(parse_alter("SELECT * FROM t"), None);
        assert_eq!(parse_alter("ALTER KEYSPACE ks WITH x"), None);
        assert!(matches!(
            parse_alter("ALTER TABLE t ADD w frozen<x>"),
            Some(Err(_))
        ));
        assert!(matches!(
            parse_alter("ALTER TABLE t RENAME a TO b"),
            Some(Err(_))
        ));
        assert!(matches!(parse_alter("ALTER TABLE"), Some(Err(_))));
    }

    #[test]
    fn a_table_changes_by_its_alters_only() {
        let mut schema = Schema::default();
        let (columns, row) = schema.columns("ks", "t", b"blob");
        assert_eq!(
            columns,
            vec![ColumnSpec::new("ks", "t", "v", ColumnType::Blob)]
        );
        assert_eq!(row, vec![Some(CqlValue::Blob(b"blob".to_vec()))]);
        let alter = |cql| parse_alter(cql).unwrap().unwrap();
        schema
            .apply("ks", &alter("ALTER TABLE t ADD w int"))
            .unwrap();
        schema.apply("ks", &alter("ALTER TABLE t DROP v")).unwrap();
        let (columns, row) = schema.columns("KS", "T", b"blob");
        assert_eq!(columns.len(), 1);
        assert_eq!(
            (columns[0].name.as_str(), &columns[0].typ),
            ("w", &ColumnType::Int)
        );
        assert_eq!(row, vec![Some(CqlValue::Int(42))]);
        // Another table is untouched.
        assert_eq!(schema.columns("ks", "u", b"").0[0].name, "v");
        assert!(schema
            .apply("ks", &alter("ALTER TABLE t ADD w text"))
            .is_err());
        assert!(schema.apply("ks", &alter("ALTER TABLE t DROP x")).is_err());
        assert!(
            schema.apply("ks", &alter("ALTER TABLE t DROP w")).is_err(),
            "the last"
        );
    }
}
