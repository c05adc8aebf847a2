//! Profiles as one TOML workload ([`to_toml_all`]): their converted parts joined, and the
//! file written with its comments, parameters, vars, schema and `[[run]]` entries.

use std::fmt::Write as _;

use super::names::{ident, weight_param};
use super::operations::{convert, Notes, Run};
use crate::workload::profile::error::ProfileError;
use crate::workload::profile::model::Profile;

/// The default of the `population` parameter: the partitions operations visit.
pub(crate) const DEFAULT_POPULATION: &str = "UNIFORM(1..1M)";

/// The default count of token ranges a token range query walks.
const DEFAULT_RANGES: u32 = 256;

/// The profile as a TOML workload, and what it could not carry over.
#[cfg(test)]
pub(crate) fn to_toml(profile: &Profile) -> Result<(String, Notes), ProfileError> {
    to_toml_all(std::slice::from_ref(profile))
}

/// Several profiles as one TOML workload (cassandra-stress's `profile=a.yaml,b.yaml`): each
/// profile's operations named `SPECNAME.OP` (weights `ops_SPECNAME_OP`, every insert 1),
/// its vars prefixed likewise, the schemas one after another; `population` and `ranges`
/// are shared, as cassandra-stress's `-pop` is. One profile's operations stay
/// unprefixed.
pub(crate) fn to_toml_all(profiles: &[Profile]) -> Result<(String, Notes), ProfileError> {
    let scoped = profiles.len() > 1;
    let mut parts = Vec::with_capacity(profiles.len());
    for (k, p) in profiles.iter().enumerate() {
        if let Some(other) = profiles[..k]
            .iter()
            .find(|o| ident(&o.specname) == ident(&p.specname))
        {
            return Err(ProfileError::SameSpecname {
                first: other.origin.clone(),
                second: p.origin.clone(),
                specname: p.specname.clone(),
            });
        }
        let mut part = convert(p, scoped.then_some(p.specname.as_str()))?;
        if scoped {
            for n in &mut part.notes {
                *n = format!("{}: {n}", p.specname);
            }
        }
        parts.push(part);
    }
    let mut schema = Vec::new();
    let mut vars: Vec<(String, String)> = Vec::new();
    let mut runs = Vec::new();
    let mut notes = Vec::new();
    let mut ranges = false;
    for part in parts {
        // Profiles of one keyspace each define it: once is enough.
        for statement in part.schema {
            if !schema.contains(&statement) {
                schema.push(statement);
            }
        }
        for v in part.vars {
            // The token ring's vars are the same for every profile.
            if !vars.iter().any(|(name, _)| *name == v.0) {
                vars.push(v);
            }
        }
        runs.extend(part.runs);
        notes.extend(part.notes);
        ranges |= part.ranges;
    }
    let toml = write(profiles, &schema, &vars, &runs, &notes, ranges);
    Ok((toml, notes))
}

/// A TOML basic string.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn write(
    profiles: &[Profile],
    schema: &[String],
    vars: &[(String, String)],
    runs: &[Run],
    notes: &Notes,
    ranges: bool,
) -> String {
    let origins: Vec<&str> = profiles.iter().map(|p| p.origin.as_str()).collect();
    let origins = origins.join(", ");
    let first = runs.first().map_or("insert", |r| r.name.as_str());
    let mut t = String::new();
    let _ = writeln!(
        t,
        "# Converted by `doppio profile convert` from the cassandra-stress profile{} {origins}.",
        if profiles.len() > 1 { "s" } else { "" }
    );
    let _ = writeln!(
        t,
        "# How each key became what follows, and where doppio reads one differently:\n\
         # bench/PROFILES.md. Run: doppio schema -w THIS.toml; doppio run -w THIS.toml \
         -P {}=1 ...",
        weight_param(first)
    );
    for n in notes {
        let _ = writeln!(t, "# note: {n}");
    }
    let names: Vec<&str> = profiles.iter().map(|p| p.specname.as_str()).collect();
    let _ = writeln!(t, "name = {}", quote(&names.join("+")));
    let _ = writeln!(
        t,
        "description = {}",
        quote(&format!(
            "cassandra-stress profile{} {origins}",
            if profiles.len() > 1 { "s" } else { "" }
        ))
    );
    let _ = writeln!(t, "\n[params]");
    let _ = writeln!(
        t,
        "population = {}   # the partitions operations visit (cassandra-stress -pop dist=...)",
        quote(DEFAULT_POPULATION)
    );
    for r in runs {
        let _ = writeln!(
            t,
            "{} = {}   # the weight of `{}` (cassandra-stress ops({}=...))",
            weight_param(&r.name),
            r.weight,
            r.name,
            r.name
        );
    }
    if ranges {
        let _ = writeln!(
            t,
            "ranges = {DEFAULT_RANGES}   # slices of the token ring the token range queries walk"
        );
    }
    let _ = writeln!(t, "\n[vars]");
    for (name, expr) in vars {
        let _ = writeln!(t, "{name} = {}", quote(expr));
    }
    let _ = writeln!(t, "\n[schema]\nstatements = [");
    for s in schema {
        let _ = writeln!(t, "    {},", quote(s));
    }
    let _ = writeln!(t, "]");
    for r in runs {
        let _ = writeln!(t);
        for c in &r.comment {
            let _ = writeln!(t, "# {c}");
        }
        let _ = writeln!(t, "[[run]]");
        let _ = writeln!(t, "name = {}", quote(&r.name));
        let _ = writeln!(t, "weight = {}", quote(&weight_param(&r.name)));
        if let Some((kind, repeat)) = r.batch {
            let _ = writeln!(t, "batch = {}", quote(kind));
            let _ = writeln!(t, "repeat = {repeat}");
        }
        let _ = writeln!(t, "statement = {}", quote(&r.statement));
        let args: Vec<String> = r.args.iter().map(|a| quote(a)).collect();
        let _ = writeln!(t, "args = [{}]", args.join(", "));
        if let Some((row, writer)) = &r.validates {
            let _ = writeln!(t, "validate = {}", quote(row));
            let _ = writeln!(t, "written_by = {}", quote(writer));
        }
    }
    t
}
