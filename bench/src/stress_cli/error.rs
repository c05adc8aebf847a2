//! Why a cassandra-stress command line cannot run: each error names the command or option
//! (as cassandra-stress spells it) and is found before anything connects.

/// A cassandra-stress command line that `doppio stress` cannot run as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StressError {
    /// Nothing after `--`.
    #[error(
        "no cassandra-stress command: give one after `--`, such as `doppio stress -- write \
         n=100k -node 127.0.0.1`"
    )]
    NoCommand,
    /// A command cassandra-stress does not have.
    #[error(
        "unknown cassandra-stress command `{command}` (doppio stress runs write, read, mixed \
         and user)"
    )]
    UnknownCommand {
        /// The command as given.
        command: String,
    },
    /// A command or option cassandra-stress has and doppio stress does not run yet.
    #[error("cassandra-stress {what} is not supported yet by doppio stress{hint}")]
    NotSupported {
        /// The command, option or sub-option as given (`counter_write`, `-graph`,
        /// `-rate auto`, ...).
        what: String,
        /// What to do instead, starting with "; " (or empty).
        hint: String,
    },
    /// An option (or sub-option of a `-group`) cassandra-stress does not have.
    #[error("unknown cassandra-stress option `{option}`{place}")]
    UnknownOption {
        /// The option as given.
        option: String,
        /// Where it was given (` in -rate`), or empty for the command's own options.
        place: String,
    },
    /// An option given twice.
    #[error("cassandra-stress option `{option}` is given twice")]
    Repeated {
        /// The option.
        option: String,
    },
    /// An option whose value is missing, malformed or out of range.
    #[error("cassandra-stress option `{option}`: `{value}` {problem}")]
    BadValue {
        /// The option (`n`, `-rate threads`, `-pop seq`, ...).
        option: String,
        /// The value as given.
        value: String,
        /// What is wrong with it, as a sentence's end ("is not a count such as 1000 or 10k").
        problem: String,
    },
    /// Options that do not go together, or one missing that the command needs.
    #[error("cassandra-stress {message}")]
    Conflict {
        /// What is wrong, naming the options.
        message: String,
    },
    /// `user profile=` names a file that cannot be read.
    #[error("cassandra-stress option `profile`: cannot read `{path}`: {reason}")]
    Profile {
        /// The path as given.
        path: String,
        /// Why.
        reason: String,
    },
}

impl StressError {
    /// A [`StressError::BadValue`].
    pub(crate) fn bad(option: &str, value: &str, problem: &str) -> Self {
        Self::BadValue {
            option: option.to_owned(),
            value: value.to_owned(),
            problem: problem.to_owned(),
        }
    }

    /// A [`StressError::NotSupported`] without a hint.
    pub(crate) fn unsupported(what: &str) -> Self {
        Self::NotSupported {
            what: what.to_owned(),
            hint: String::new(),
        }
    }

    /// A [`StressError::NotSupported`] with what to do instead.
    pub(crate) fn unsupported_hint(what: &str, hint: &str) -> Self {
        Self::NotSupported {
            what: what.to_owned(),
            hint: format!("; {hint}"),
        }
    }

    /// A [`StressError::Conflict`].
    pub(crate) fn conflict(message: &str) -> Self {
        Self::Conflict {
            message: message.to_owned(),
        }
    }
}
