//! The words of a cassandra-stress command line, split as cassandra-stress splits them:
//! the command and its options, then groups that each start with a `-name` word, every word
//! read as `key=value`, `name(k=v,...)`, a comparison (`err<0.02`, `threads>=4`) or a bare
//! word (`native`, `127.0.0.1,127.0.0.2`, `no-warmup`).

use super::error::StressError;

/// One word of a group.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Word {
    /// `key=value` (the value may hold `=` and parentheses: `dist=GAUSSIAN(1..10)`).
    Pair {
        /// Left of the first `=`.
        key: String,
        /// Right of it.
        value: String,
    },
    /// `name(k=v,k=v)`: `ratio(write=1,read=3)`, `ops(insert=1)`, `replication(factor=3)`.
    Call {
        /// Before the parenthesis.
        name: String,
        /// The pairs inside, in order.
        args: Vec<(String, String)>,
        /// The word as given.
        text: String,
    },
    /// `key<value`, `key>value`, `key>=value`, `key<=value` (cassandra-stress's stop on
    /// uncertainty and its auto-rate bounds): read only to be refused by name.
    Compare {
        /// Left of the comparison.
        key: String,
        /// The word as given.
        text: String,
    },
    /// Anything else.
    Bare(String),
}

impl Word {
    /// The name an error gives this word: its key, name or text.
    pub(crate) fn name(&self) -> &str {
        match self {
            Word::Pair { key, .. } | Word::Compare { key, .. } => key,
            Word::Call { name, .. } => name,
            Word::Bare(text) => text,
        }
    }
}

/// The words of the command, or of one `-group`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Group {
    /// `-rate`, `-pop`, ... as given (lower-cased); the command's own words have the
    /// command's name.
    pub name: String,
    /// Its words in order.
    pub words: Vec<Word>,
}

/// The command line split: the command (its name lower-cased, and its options), then the
/// `-groups` in the order given.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Line {
    /// The command and its options.
    pub command: Group,
    /// The option groups.
    pub groups: Vec<Group>,
}

/// Whether `word` starts an option group: `-` and a letter.
fn is_group(word: &str) -> bool {
    let mut chars = word.chars();
    chars.next() == Some('-') && chars.next().is_some_and(|c| c.is_ascii_alphabetic())
}

/// Reads one word.
pub(crate) fn word(text: &str) -> Result<Word, StressError> {
    let t = text.trim();
    let paren = t.find('(');
    let eq = t.find('=');
    let cmp = t.find(['<', '>']);
    // A comparison before any `=` or parenthesis: `err<0.02`, `threads>=4`.
    if let Some(c) = cmp {
        if paren.is_none_or(|p| c < p) && eq.is_none_or(|e| c < e || e == c + 1) {
            return Ok(Word::Compare {
                key: t[..c].to_ascii_lowercase(),
                text: t.to_owned(),
            });
        }
    }
    match (paren, eq) {
        (Some(p), e) if e.is_none_or(|e| p < e) => {
            let name = t[..p].to_ascii_lowercase();
            let Some(inner) = t[p + 1..].strip_suffix(')') else {
                return Err(StressError::bad(&name, t, "has no closing parenthesis"));
            };
            let mut args = Vec::new();
            for part in inner.split(',').filter(|p| !p.trim().is_empty()) {
                let Some((k, v)) = part.split_once('=') else {
                    return Err(StressError::bad(
                        &name,
                        t,
                        &format!("has `{part}` where NAME=VALUE belongs"),
                    ));
                };
                if k.trim().is_empty() || v.trim().is_empty() {
                    return Err(StressError::bad(
                        &name,
                        t,
                        &format!("has `{part}` where NAME=VALUE belongs"),
                    ));
                }
                args.push((k.trim().to_owned(), v.trim().to_owned()));
            }
            Ok(Word::Call {
                name,
                args,
                text: t.to_owned(),
            })
        }
        (_, Some(e)) => Ok(Word::Pair {
            key: t[..e].to_ascii_lowercase(),
            value: t[e + 1..].to_owned(),
        }),
        _ => Ok(Word::Bare(t.to_owned())),
    }
}

/// Splits `words` (what follows `doppio stress --`) into the command and its groups.
pub(crate) fn line(words: &[String]) -> Result<Line, StressError> {
    let Some((first, rest)) = words.split_first() else {
        return Err(StressError::NoCommand);
    };
    if is_group(first) {
        return Err(StressError::NoCommand);
    }
    let mut command = Group {
        name: first.trim().to_ascii_lowercase(),
        words: Vec::new(),
    };
    let mut groups: Vec<Group> = Vec::new();
    for w in rest.iter().filter(|w| !w.trim().is_empty()) {
        if is_group(w) {
            groups.push(Group {
                name: w.trim().to_ascii_lowercase(),
                words: Vec::new(),
            });
            continue;
        }
        let parsed = word(w)?;
        match groups.last_mut() {
            Some(g) => g.words.push(parsed),
            None => command.words.push(parsed),
        }
    }
    Ok(Line { command, groups })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn words_are_pairs_calls_comparisons_or_bare() {
        assert_eq!(
            word("dist=GAUSSIAN(1..10,5)").unwrap(),
            Word::Pair {
                key: "dist".into(),
                value: "GAUSSIAN(1..10,5)".into()
            }
        );
        assert_eq!(
            word("ratio(write=1,read=3)").unwrap(),
            Word::Call {
                name: "ratio".into(),
                args: vec![("write".into(), "1".into()), ("read".into(), "3".into())],
                text: "ratio(write=1,read=3)".into(),
            }
        );
        assert!(matches!(word("err<0.02").unwrap(), Word::Compare { key, .. } if key == "err"));
        assert!(
            matches!(word("threads>=4").unwrap(), Word::Compare { key, .. } if key == "threads")
        );
        assert_eq!(word("native").unwrap(), Word::Bare("native".into()));
        assert_eq!(
            word("N=1000").unwrap(),
            Word::Pair {
                key: "n".into(),
                value: "1000".into()
            }
        );
    }

    #[test]
    fn a_malformed_call_is_an_error_naming_it() {
        let e = word("ratio(write=1").unwrap_err();
        assert!(e.to_string().contains("`ratio`"), "{e}");
        let e = word("ops(insert)").unwrap_err();
        assert!(
            e.to_string().contains("`ops`") && e.to_string().contains("`insert`"),
            "{e}"
        );
    }

    #[test]
    fn groups_start_at_a_dash_and_a_letter() {
        let l = line(&words("write n=10 -rate threads=4 -node 127.0.0.1")).unwrap();
        assert_eq!(l.command.name, "write");
        assert_eq!(l.command.words.len(), 1);
        assert_eq!(l.groups.len(), 2);
        assert_eq!(l.groups[0].name, "-rate");
        assert_eq!(l.groups[1].words, vec![Word::Bare("127.0.0.1".into())]);
        assert_eq!(line(&[]).unwrap_err(), StressError::NoCommand);
        assert_eq!(
            line(&words("-rate threads=1")).unwrap_err(),
            StressError::NoCommand
        );
    }
}
