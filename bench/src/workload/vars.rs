//! A workload's `[vars]`: named sub-expressions compiled in the order they name each other.

use std::collections::BTreeMap;

use super::error::WorkloadError;
use super::expr::{mix, Expr, ParamValue};
use super::spec::line_of;

/// Compiles a workload's `[vars]`, each with the ones it names (in any order); a name that is
/// also a parameter, or vars that name each other in a circle, are errors.
pub(super) fn compile_vars(
    name: &str,
    text: &str,
    specs: &BTreeMap<String, toml::Spanned<String>>,
    params: &BTreeMap<String, ParamValue>,
) -> Result<BTreeMap<String, Expr>, WorkloadError> {
    let lookup = |n: &str| params.get(n).cloned();
    let mut done: BTreeMap<String, Expr> = BTreeMap::new();
    for (k, v) in specs {
        if params.contains_key(k) || matches!(k.as_str(), "i" | "j" | "true" | "false" | "null") {
            return Err(WorkloadError::Format {
                name: name.to_owned(),
                message: format!(
                    "[vars] `{k}` (line {}) is already a parameter or a reserved name",
                    line_of(text, v.span().start)
                ),
            });
        }
    }
    // Each pass compiles the vars whose named vars are all compiled.
    while done.len() < specs.len() {
        let before = done.len();
        let mut last = None;
        for (k, (n, v)) in specs.iter().enumerate() {
            if done.contains_key(n) {
                continue;
            }
            let pending = |x: &str| specs.contains_key(x) && !done.contains_key(x);
            let var = |x: &str| done.get(x).cloned();
            let site = mix(0x7a25_0000 ^ k as u64);
            match Expr::compile_with(v.get_ref(), site, &lookup, &var) {
                Ok(e) => {
                    done.insert(n.clone(), e);
                }
                Err(error) => {
                    let waits = specs
                        .keys()
                        .any(|x| pending(x) && x != n && mentions(v.get_ref(), x));
                    if !waits || mentions(v.get_ref(), n) {
                        return Err(WorkloadError::Expr {
                            name: name.to_owned(),
                            line: line_of(text, v.span().start),
                            statement: format!("[vars] {n}"),
                            error,
                        });
                    }
                    last = Some((n.clone(), line_of(text, v.span().start)));
                }
            }
        }
        if done.len() == before {
            let (n, line) = last.unwrap_or_default();
            return Err(WorkloadError::Format {
                name: name.to_owned(),
                message: format!("[vars] `{n}` (line {line}) names itself through other vars"),
            });
        }
    }
    Ok(done)
}

/// Whether `expr` names the identifier `ident` (a whole word).
fn mentions(expr: &str, ident: &str) -> bool {
    expr.match_indices(ident).any(|(at, _)| {
        let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
        let before = expr[..at].chars().next_back().is_some_and(word);
        let after = expr[at + ident.len()..].chars().next().is_some_and(word);
        !before && !after
    })
}
