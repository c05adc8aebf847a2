//! One `[[run]]` entry compiled: a single statement, a sequence of steps or a batch (its
//! `repeat` checked), and the `written_by` names of validated reads resolved.

use super::error::WorkloadError;
use super::expr::mix;
use super::model::{BatchKind, RunGroup, RunMode, Statement, MAX_BATCH_STATEMENTS};
use super::spec::{line_of, RunSpec};

/// Sets each reader's [`Statement::written_by`] from the name its `written_by` gives: a run
/// statement of another name, the reader having a `validate`.
pub(super) fn resolve_writers(
    workload: &str,
    text: &str,
    run: &mut [Statement],
    pending: Vec<(usize, toml::Spanned<String>)>,
) -> Result<(), WorkloadError> {
    for (reader, name) in pending {
        let line = line_of(text, name.span().start);
        let fail = |message: String| WorkloadError::Format {
            name: workload.to_owned(),
            message: format!("line {line}: {message}"),
        };
        let label = run[reader].name.clone();
        if run[reader].validate.is_none() {
            return Err(fail(format!(
                "{label}: `written_by` says which statement wrote the row that `validate` \
                 names, but {label} has no `validate`"
            )));
        }
        let wanted = name.get_ref();
        let Some(writer) = run.iter().position(|s| s.name == *wanted) else {
            let names: Vec<&str> = run.iter().map(|s| s.name.as_str()).collect();
            return Err(fail(format!(
                "{label}: written_by = \"{wanted}\" is no run statement (they are {names:?})"
            )));
        };
        if writer == reader {
            return Err(fail(format!(
                "{label}: written_by names the statement itself; name the one that wrote the \
                 row it reads"
            )));
        }
        run[reader].written_by = Some(writer);
    }
    Ok(())
}

/// Compiles one statement: its name, CQL, args, `validate`, `idempotent` and seed.
pub(super) type CompileFn<'a> = dyn Fn(
        String,
        &toml::Spanned<String>,
        &[toml::Spanned<String>],
        Option<&toml::Spanned<String>>,
        bool,
        u64,
    ) -> Result<Statement, WorkloadError>
    + 'a;

/// The most statements a BATCH may hold.
const MAX_BATCH: usize = MAX_BATCH_STATEMENTS as usize;

/// Where a `[[run]]` entry is, and what its caller evaluated of it.
#[derive(Debug, Clone, Copy)]
pub(super) struct RunPlace {
    /// Its position among the `[[run]]` entries (0-based).
    pub(super) index: usize,
    /// Its `repeat`, evaluated (not an integer: -1), with the line it is on.
    pub(super) repeat: Option<(i64, usize)>,
}

/// Compiles `[[run]]` entry `at.index` (`r`): its statements appended to `run`, its records
/// starting at entry `entry`.
pub(super) fn compile_run(
    workload: &str,
    text: &str,
    r: &RunSpec,
    at: RunPlace,
    compile: &CompileFn<'_>,
    run: &mut Vec<Statement>,
    entry: usize,
) -> Result<RunGroup, WorkloadError> {
    let format = |line: Option<usize>, message: String| WorkloadError::Format {
        name: workload.to_owned(),
        message: match line {
            Some(l) => format!("line {l}: {message}"),
            None => message,
        },
    };
    let k = at.index;
    let group_name = r.name.clone().unwrap_or_else(|| format!("run{}", k + 1));
    let batch = match &r.batch {
        None => None,
        Some(b) => Some(match b.get_ref().as_str() {
            "logged" => BatchKind::Logged,
            "unlogged" => BatchKind::Unlogged,
            "counter" => BatchKind::Counter,
            other => {
                return Err(format(
                    Some(line_of(text, b.span().start)),
                    format!(
                        "[[run]] {group_name}: batch = \"{other}\" is not \"logged\", \
                         \"unlogged\" or \"counter\""
                    ),
                ))
            }
        }),
    };
    let first = run.len();
    let seed = 0x1000 + k as u64;
    if r.step.is_empty() {
        let Some(statement) = &r.statement else {
            return Err(format(
                None,
                format!("[[run]] {group_name} needs a `statement` or `[[run.step]]` tables"),
            ));
        };
        run.push(compile(
            group_name.clone(),
            statement,
            &r.args,
            r.validate.as_ref(),
            r.idempotent,
            seed,
        )?);
    } else {
        if let Some(s) = &r.statement {
            return Err(format(
                Some(line_of(text, s.span().start)),
                format!(
                    "[[run]] {group_name} has both a `statement` and steps: a sequence's \
                     statements are its [[run.step]] tables"
                ),
            ));
        }
        if let Some(a) = r
            .args
            .first()
            .or(r.validate.as_ref())
            .or(r.written_by.as_ref())
        {
            return Err(format(
                Some(line_of(text, a.span().start)),
                format!(
                    "[[run]] {group_name} has steps: `args`, `validate` and `written_by` \
                     belong to each [[run.step]]"
                ),
            ));
        }
        for (n, step) in r.step.iter().enumerate() {
            let step_name = step
                .name
                .clone()
                .unwrap_or_else(|| format!("step{}", n + 1));
            run.push(compile(
                format!("{group_name}.{step_name}"),
                &step.statement,
                &step.args,
                step.validate.as_ref(),
                step.idempotent.unwrap_or(r.idempotent),
                mix(seed) ^ (n as u64 + 1).wrapping_mul(0x5eb5),
            )?);
        }
    }
    let repeat = match at.repeat {
        None => 1,
        Some((n, line)) => {
            let line = Some(line);
            if batch.is_none() {
                return Err(format(
                    line,
                    format!(
                        "[[run]] {group_name}: `repeat` makes a batch of several rows; it \
                         needs `batch = \"logged\"`, \"unlogged\" or \"counter\""
                    ),
                ));
            }
            let statements = (run.len() - first) as i64;
            match u32::try_from(n) {
                Ok(r) if r >= 1 && i64::from(r) * statements <= MAX_BATCH as i64 => r,
                _ => {
                    return Err(format(
                        line,
                        format!(
                            "[[run]] {group_name}: repeat = {} is not between 1 and {} \
                             (a batch holds at most {MAX_BATCH} statements)",
                            n,
                            MAX_BATCH as i64 / statements.max(1)
                        ),
                    ))
                }
            }
        }
    };
    if batch.is_some() {
        if let Some(s) = run[first..].iter().find(|s| s.validate.is_some()) {
            return Err(WorkloadError::Bind {
                name: workload.to_owned(),
                statement: s.label(),
                message: "`validate` reads a statement's rows: not in a batch, which \
                          returns none"
                    .into(),
            });
        }
    }
    Ok(RunGroup {
        name: group_name,
        statements: first..run.len(),
        mode: match batch {
            Some(b) => RunMode::Batch(b),
            None if r.step.is_empty() => RunMode::Single,
            None => RunMode::Sequence,
        },
        repeat,
        entry,
    })
}
