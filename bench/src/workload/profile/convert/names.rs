//! The names a conversion gives: operations (scoped beside other profiles), their weight
//! parameters, vars made of CQL names, and CQL names quoted as CQL needs them.

/// The name of the operation that reads back and checks the insert's rows (`--validate`).
pub(crate) const VALIDATE: &str = "validate";

/// The parameter that weighs operation `op` of a converted profile (`ops_insert`,
/// `ops_sensors_insert` for `sensors.insert`): what `ops(op=w)` sets.
pub fn weight_param(op: &str) -> String {
    format!("ops_{}", ident(op))
}

/// The name of operation `op` of a profile converted with `scope` (its specname, beside
/// other profiles): `op`, or `SCOPE.op`.
pub(crate) fn op_name(scope: Option<&str>, op: &str) -> String {
    match scope {
        Some(s) => format!("{s}.{op}"),
        None => op.to_owned(),
    }
}

/// The name of the insert of a profile converted with `scope`: `insert`, or `SCOPE.insert`.
pub(crate) fn insert_op(scope: Option<&str>) -> String {
    op_name(scope, "insert")
}

/// A CQL name as a generator's var name: letters, digits and `_`.
pub(super) fn ident(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// A column's name as CQL needs it: quoted unless lower-case letters, digits and `_`.
pub(super) fn cql_name(name: &str) -> String {
    if name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    {
        name.to_owned()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}
