//! A profile's YAML read into a [`Profile`]: the keys cassandra-stress reads, no other (an
//! unknown key is an error naming it and its line, where cassandra-stress would ignore some
//! and refuse others), every distribution parsed, defaults filled in.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_yaml_ng::Value;

use super::error::{line_of_key, ProfileError};
use super::model::{
    defaults, BatchType, ColumnSpec, Fields, InsertSpec, Profile, QuerySpec, TokenRangeSpec,
};
use crate::workload::dist::{Distribution, Ratio};

/// The top level, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    specname: Option<String>,
    keyspace: Option<String>,
    keyspace_definition: Option<String>,
    table: Option<String>,
    table_definition: Option<String>,
    #[serde(default)]
    extra_definitions: Vec<String>,
    #[serde(default)]
    columnspec: Vec<BTreeMap<String, Value>>,
    #[serde(default)]
    insert: BTreeMap<String, Value>,
    #[serde(default)]
    queries: BTreeMap<String, BTreeMap<String, Value>>,
    #[serde(default)]
    token_range_queries: BTreeMap<String, BTreeMap<String, Value>>,
}

const COLUMN_KEYS: &str = "name, size, population, cluster";
const INSERT_KEYS: &str = "partitions, select, row-population, batchtype";
const QUERY_KEYS: &str = "cql, fields, consistencyLevel, serialConsistencyLevel";
const RANGE_KEYS: &str = "columns, page_size";
const CONSISTENCIES: &[&str] = &[
    "ANY",
    "ONE",
    "TWO",
    "THREE",
    "QUORUM",
    "ALL",
    "LOCAL_QUORUM",
    "EACH_QUORUM",
    "LOCAL_ONE",
];
const SERIALS: &[&str] = &["SERIAL", "LOCAL_SERIAL"];

impl Profile {
    /// Reads the profiles of `paths`, comma-separated as cassandra-stress's `profile=`
    /// takes them (`a.yaml,b.yaml`: run together, see [`super::convert::to_toml_all`]).
    pub(crate) fn read_all(paths: &str) -> Result<Vec<Self>, ProfileError> {
        if paths.split(',').any(|p| p.trim().is_empty()) {
            return Err(ProfileError::EmptyPath {
                list: paths.to_owned(),
            });
        }
        paths.split(',').map(|p| Self::read(p.trim())).collect()
    }

    /// Reads the profile at `path`.
    pub(crate) fn read(path: &str) -> Result<Self, ProfileError> {
        let text = std::fs::read_to_string(path).map_err(|source| ProfileError::Io {
            path: path.to_owned(),
            source,
        })?;
        Self::from_yaml(path, &text)
    }

    /// Reads a profile from its text; `origin` names it in errors.
    pub(crate) fn from_yaml(origin: &str, text: &str) -> Result<Self, ProfileError> {
        let raw: Raw = serde_yaml_ng::from_str(text).map_err(|e| ProfileError::Yaml {
            origin: origin.to_owned(),
            message: e.to_string(),
        })?;
        let reader = Reader { origin, text };
        let keyspace = raw.keyspace.ok_or_else(|| reader.missing("keyspace"))?;
        let table = raw.table.ok_or_else(|| reader.missing("table"))?;
        let nonempty = |s: Option<String>| s.filter(|s| !s.trim().is_empty());
        let columnspec_line = line_of_key(text, "columnspec", 1);
        let mut columns: Vec<ColumnSpec> = Vec::with_capacity(raw.columnspec.len());
        for (k, entry) in raw.columnspec.into_iter().enumerate() {
            let column = reader.column(k, entry, columnspec_line)?;
            if columns.iter().any(|c| c.name == column.name) {
                return Err(reader.value(
                    "columnspec",
                    columnspec_line,
                    format!("column {} is named twice", column.name),
                ));
            }
            columns.push(column);
        }
        let insert = reader.insert(raw.insert)?;
        let mut queries = Vec::with_capacity(raw.queries.len());
        for (name, q) in raw.queries {
            queries.push(reader.query(&name, q)?);
        }
        let mut token_range_queries = Vec::with_capacity(raw.token_range_queries.len());
        for (name, q) in raw.token_range_queries {
            let name = name.to_lowercase();
            if queries.iter().any(|q: &QuerySpec| q.name == name) {
                return Err(reader.value(
                    "token_range_queries",
                    line_of_key(text, "token_range_queries", 1),
                    format!("{name} is also the name of a query (names must differ)"),
                ));
            }
            token_range_queries.push(reader.token_range(&name, q)?);
        }
        Ok(Profile {
            origin: origin.to_owned(),
            specname: raw
                .specname
                .unwrap_or_else(|| format!("{keyspace}.{table}")),
            keyspace,
            keyspace_definition: nonempty(raw.keyspace_definition),
            table,
            table_definition: nonempty(raw.table_definition),
            extra_definitions: raw.extra_definitions,
            columns,
            insert,
            queries,
            token_range_queries,
        })
    }
}

/// The text being read, for errors that name a line.
struct Reader<'a> {
    origin: &'a str,
    text: &'a str,
}

impl Reader<'_> {
    fn missing(&self, key: &'static str) -> ProfileError {
        ProfileError::Missing {
            origin: self.origin.to_owned(),
            key,
            why: String::new(),
        }
    }

    fn value(&self, key: &str, line: usize, message: String) -> ProfileError {
        ProfileError::Value {
            origin: self.origin.to_owned(),
            line,
            key: key.to_owned(),
            message,
        }
    }

    fn unknown(&self, key: &str, place: String, known: &'static str, from: usize) -> ProfileError {
        ProfileError::UnknownKey {
            origin: self.origin.to_owned(),
            line: line_of_key(self.text, key, from),
            key: key.to_owned(),
            place,
            known,
        }
    }

    /// A scalar value as text (strings as they are, numbers and booleans written out).
    fn scalar(&self, key: &str, v: &Value, from: usize) -> Result<String, ProfileError> {
        match v {
            Value::String(s) => Ok(s.clone()),
            Value::Number(n) => Ok(n.to_string()),
            Value::Bool(b) => Ok(b.to_string()),
            _ => Err(self.value(
                key,
                line_of_key(self.text, key.rsplit('.').next().unwrap_or(key), from),
                "expected a single value, not a list or a map".into(),
            )),
        }
    }

    fn dist(&self, key: &str, text: &str, from: usize) -> Result<Distribution, ProfileError> {
        Distribution::parse(text).map_err(|error| ProfileError::Distribution {
            origin: self.origin.to_owned(),
            line: line_of_key(self.text, key.rsplit('.').next().unwrap_or(key), from),
            key: key.to_owned(),
            error,
        })
    }

    fn ratio(&self, key: &str, text: &str, from: usize) -> Result<Ratio, ProfileError> {
        Ratio::parse(text).map_err(|error| ProfileError::Distribution {
            origin: self.origin.to_owned(),
            line: line_of_key(self.text, key.rsplit('.').next().unwrap_or(key), from),
            key: key.to_owned(),
            error,
        })
    }

    /// `columnspec` entry `k` (keys in any case, as cassandra-stress lowers them).
    fn column(
        &self,
        k: usize,
        entry: BTreeMap<String, Value>,
        from: usize,
    ) -> Result<ColumnSpec, ProfileError> {
        let mut name = None;
        let mut fields: Vec<(String, String)> = Vec::new();
        for (key, v) in &entry {
            let lower = key.to_lowercase();
            let s = self.scalar(&format!("columnspec.{key}"), v, from)?;
            match lower.as_str() {
                "name" => name = Some(s),
                "size" | "population" | "cluster" => fields.push((lower, s)),
                _ => {
                    return Err(self.unknown(
                        key,
                        format!("columnspec entry {}", k + 1),
                        COLUMN_KEYS,
                        from,
                    ))
                }
            }
        }
        let Some(name) = name else {
            return Err(self.value("columnspec", from, format!("entry {} has no name", k + 1)));
        };
        let mut spec = ColumnSpec::defaults(&name);
        let at = line_of_key(self.text, "name", from).max(from);
        for (key, s) in fields {
            let d = self.dist(&format!("columnspec {name}.{key}"), &s, at)?;
            match key.as_str() {
                "size" => spec.size = d,
                "population" => spec.population = d,
                _ => spec.cluster = d,
            }
        }
        Ok(spec)
    }

    fn insert(&self, entries: BTreeMap<String, Value>) -> Result<InsertSpec, ProfileError> {
        let from = line_of_key(self.text, "insert", 1);
        let default = |s: &str| Distribution::parse(s).unwrap_or_else(|_| unreachable!("{s}"));
        let default_ratio = |s: &str| Ratio::parse(s).unwrap_or_else(|_| unreachable!("{s}"));
        let mut spec = InsertSpec {
            partitions: default(defaults::PARTITIONS),
            select: default_ratio(defaults::SELECT),
            row_population: default_ratio(defaults::ROW_POPULATION),
            batchtype: None,
        };
        for (key, v) in &entries {
            let s = self.scalar(&format!("insert.{key}"), v, from)?;
            // An empty value keeps the default, as in cassandra-stress.
            if s.trim().is_empty() {
                continue;
            }
            match key.to_lowercase().as_str() {
                "partitions" => spec.partitions = self.dist("insert.partitions", &s, from)?,
                "select" => spec.select = self.ratio("insert.select", &s, from)?,
                "row-population" => {
                    spec.row_population = self.ratio("insert.row-population", &s, from)?
                }
                "batchtype" => {
                    spec.batchtype = Some(match s.trim().to_uppercase().as_str() {
                        "LOGGED" => BatchType::Logged,
                        "UNLOGGED" => BatchType::Unlogged,
                        "COUNTER" => BatchType::Counter,
                        other => {
                            return Err(self.value(
                                "insert.batchtype",
                                line_of_key(self.text, key, from),
                                format!("`{other}` is not LOGGED, UNLOGGED or COUNTER"),
                            ))
                        }
                    })
                }
                _ => return Err(self.unknown(key, "insert".into(), INSERT_KEYS, from)),
            }
        }
        if spec.partitions.min < 1 {
            return Err(self.value(
                "insert.partitions",
                line_of_key(self.text, "partitions", from),
                format!("{} can give fewer than 1 partition", spec.partitions),
            ));
        }
        Ok(spec)
    }

    fn query(&self, name: &str, q: BTreeMap<String, Value>) -> Result<QuerySpec, ProfileError> {
        let from = line_of_key(self.text, name, line_of_key(self.text, "queries", 1));
        let place = format!("query {name}");
        let mut cql = None;
        let mut fields = Fields::MultiRow;
        let (mut consistency, mut serial) = (None, None);
        for (key, v) in &q {
            let s = self.scalar(&format!("queries.{name}.{key}"), v, from)?;
            let level = |allowed: &[&str]| {
                let up = s.trim().to_uppercase();
                if allowed.contains(&up.as_str()) {
                    Ok(up)
                } else {
                    Err(self.value(
                        &format!("queries.{name}.{key}"),
                        line_of_key(self.text, key, from),
                        format!("`{s}` is not one of {}", allowed.join(", ")),
                    ))
                }
            };
            match key.as_str() {
                "cql" => cql = Some(s.clone()),
                "fields" => {
                    fields = match s.trim().to_lowercase().as_str() {
                        "samerow" => Fields::SameRow,
                        "multirow" => Fields::MultiRow,
                        _ => {
                            return Err(self.value(
                                &format!("queries.{name}.fields"),
                                line_of_key(self.text, "fields", from),
                                format!("`{s}` is not samerow or multirow"),
                            ))
                        }
                    }
                }
                "consistencyLevel" => consistency = Some(level(CONSISTENCIES)?),
                "serialConsistencyLevel" => serial = Some(level(SERIALS)?),
                _ => return Err(self.unknown(key, place, QUERY_KEYS, from)),
            }
        }
        let Some(cql) = cql else {
            return Err(ProfileError::Missing {
                origin: self.origin.to_owned(),
                key: "cql",
                why: format!(" in query {name}"),
            });
        };
        Ok(QuerySpec {
            name: name.to_lowercase(),
            cql,
            fields,
            consistency,
            serial_consistency: serial,
            line: line_of_key(self.text, "cql", from),
        })
    }

    fn token_range(
        &self,
        name: &str,
        q: BTreeMap<String, Value>,
    ) -> Result<TokenRangeSpec, ProfileError> {
        let from = line_of_key(
            self.text,
            name,
            line_of_key(self.text, "token_range_queries", 1),
        );
        let mut spec = TokenRangeSpec {
            name: name.to_owned(),
            columns: "*".into(),
            page_size: 5000,
        };
        for (key, v) in &q {
            let s = self.scalar(&format!("token_range_queries.{name}.{key}"), v, from)?;
            match key.as_str() {
                "columns" => spec.columns = s,
                "page_size" => {
                    spec.page_size = s.trim().parse().ok().filter(|&n| n > 0).ok_or_else(|| {
                        self.value(
                            &format!("token_range_queries.{name}.page_size"),
                            line_of_key(self.text, "page_size", from),
                            format!("`{s}` is not a positive count"),
                        )
                    })?
                }
                _ => {
                    return Err(self.unknown(
                        key,
                        format!("token range query {name}"),
                        RANGE_KEYS,
                        from,
                    ))
                }
            }
        }
        Ok(spec)
    }
}
