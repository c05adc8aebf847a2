//! Parameters: `-P name=value` values (and defaults) parsed by shape, and substituted into
//! statements as `${name}`.

use std::collections::BTreeMap;

use super::expr::ParamValue;
use crate::units;

/// A `-P name=value` override, parsed: integers (with k/M/G suffixes), floats, durations
/// (`10ms`, `2s`, `1m`: as integer milliseconds), or strings. Counts and durations are read
/// as the command line reads them ([`crate::units`]).
pub(crate) fn parse_param_value(text: &str) -> ParamValue {
    let t = text.trim();
    if let Ok(v) = t.replace('_', "").parse::<i64>() {
        return ParamValue::Int(v);
    }
    let (sign, magnitude) = match t.strip_prefix('-') {
        Some(m) => (-1, m),
        None => (1, t),
    };
    if let Some(v) = units::count(magnitude)
        .ok()
        .and_then(|n| i64::try_from(n).ok())
    {
        return ParamValue::Int(sign * v);
    }
    if let Ok(v) = t.parse::<f64>() {
        return ParamValue::Float(v);
    }
    if let Ok(d) = units::duration(t) {
        return ParamValue::Int((d.as_secs_f64() * 1e3).round() as i64);
    }
    ParamValue::Str(text.to_owned())
}

pub(super) fn param_text(v: &ParamValue) -> String {
    match v {
        ParamValue::Int(i) => i.to_string(),
        ParamValue::Float(f) => f.to_string(),
        ParamValue::Str(s) => s.clone(),
    }
}

/// Replaces every `${name}` in `cql`; returns the first undefined name as the error.
pub(super) fn substitute(
    cql: &str,
    params: &BTreeMap<String, ParamValue>,
) -> Result<String, String> {
    let mut out = String::with_capacity(cql.len());
    let mut rest = cql;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(after.to_owned());
        };
        let key = &after[..end];
        match params.get(key) {
            Some(v) => out.push_str(&param_text(v)),
            None => return Err(key.to_owned()),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}
