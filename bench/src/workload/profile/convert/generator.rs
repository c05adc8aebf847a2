//! A column's value as a generator expression: a distribution sampled by a key, and the
//! generator of each CQL type (collections element by element).

/// A spec's distribution as a string literal inside an expression.
fn lit(d: &impl std::fmt::Display) -> String {
    format!("'{d}'")
}

/// A sample of `d` keyed by `x`: the constant itself when `d` has one value (`FIXED(n)`,
/// cassandra-stress's default `cluster`), so that nothing is sampled per request for it.
pub(super) fn sample(d: &crate::workload::dist::Distribution, x: &str) -> String {
    if d.min == d.max {
        d.min.to_string()
    } else {
        format!("dist({}, {x})", lit(d))
    }
}

/// The generator of a value of `ty` from identity expression `v`, with `size` its length
/// or element count and `salt` the column's own seed.
pub(super) fn value_of(ty: &str, v: &str, size: &str, salt: u64) -> Result<String, String> {
    let ty = strip_frozen(ty);
    let scalar = |t: &str, v: &str| -> Option<String> {
        Some(match t {
            "text" | "varchar" | "ascii" => format!("text({size}, {v}, {salt})"),
            "blob" => format!("blob({size}, {v}, {salt})"),
            "bigint" | "varint" | "counter" | "timestamp" => v.to_owned(),
            "int" => format!("{v} % 2147483647"),
            "smallint" => format!("{v} % 32767"),
            "tinyint" => format!("{v} % 127"),
            "date" => format!("{v} % 1000000"),
            "time" => format!("{v} % 86400000000000"),
            "boolean" => format!("{v} % 2"),
            "float" | "double" => format!("float({v} % 16777216)"),
            "uuid" | "timeuuid" => format!("uuid({v}, {salt})"),
            _ => return None,
        })
    };
    if let Some(s) = scalar(ty, v) {
        return Ok(s);
    }
    let inner = |prefix: &str| ty.strip_prefix(prefix).and_then(|t| t.strip_suffix('>'));
    // Elements: identity hash(v, j), 8 characters or bytes for text and blob.
    let element = |t: &str, offset: u64| -> Result<String, String> {
        let t = strip_frozen(t);
        let e = format!("hash({v}, j + {offset})");
        let e = match t {
            "text" | "varchar" | "ascii" => format!("text(8, {e}, {salt})"),
            "blob" => format!("blob(8, {e}, {salt})"),
            _ => scalar(t, &e).ok_or_else(|| format!("no generator for elements of type {t}"))?,
        };
        Ok(e)
    };
    if let Some(t) = inner("list<") {
        return Ok(format!("list({size}, {})", element(t, 1)?));
    }
    if let Some(t) = inner("set<") {
        return Ok(format!("set({size}, {})", element(t, 1)?));
    }
    if let Some(kv) = inner("map<") {
        let (k, val) = split_pair(kv).ok_or("a map type without two parts")?;
        return Ok(format!(
            "map({size}, {}, {})",
            element(k, 1)?,
            element(val, 1_000_001)?
        ));
    }
    Err(
        "no generator for this type yet (inet, decimal, duration, tuples, user types and \
         vectors are not converted)"
            .into(),
    )
}

pub(super) fn strip_frozen(t: &str) -> &str {
    t.strip_prefix("frozen<")
        .and_then(|t| t.strip_suffix('>'))
        .unwrap_or(t)
}

/// `K,V` of a map's parameters, split at the comma outside angle brackets.
fn split_pair(kv: &str) -> Option<(&str, &str)> {
    let mut depth = 0;
    for (k, c) in kv.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            ',' if depth == 0 => return Some((&kv[..k], &kv[k + 1..])),
            _ => {}
        }
    }
    None
}
