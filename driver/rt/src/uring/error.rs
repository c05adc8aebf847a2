//! The runtime's one error: io_uring (or its provided-buffer ring) cannot be used here.
//!
//! Invariant: building an executor never panics and never hangs on a refused setup; every
//! refusal (setup syscall, buffer-ring registration, an impossible [`super::Config`]) is an
//! [`UringError::Unavailable`] whose message is one sentence naming the cause and the fallback.

use std::io;

/// Why the io_uring runtime cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UringError {
    /// io_uring, or a feature this runtime needs, is refused on this machine (or the
    /// configuration asks for something it cannot give).
    #[error("io_uring is not usable here: {cause}; use the glommio runtime instead")]
    Unavailable {
        /// What failed, with the OS error text and its likely reasons.
        cause: String,
    },
}

impl UringError {
    /// A refusal by a setup step (`what`, e.g. "io_uring_setup") with the OS error `err`.
    pub(crate) fn os(what: &str, err: &io::Error) -> UringError {
        let hint = match err.raw_os_error() {
            Some(libc::ENOSYS) => " (kernel too old or built without io_uring)",
            Some(libc::EPERM) | Some(libc::EACCES) => {
                " (kernel.io_uring_disabled set, or a seccomp filter)"
            }
            Some(libc::ENOMEM) => " (a locked-memory limit, or not enough memory)",
            Some(libc::EINVAL) => " (kernel too old for a requested feature, or a bad size)",
            _ => " (kernel too old, kernel.io_uring_disabled set, or a locked-memory limit)",
        };
        UringError::Unavailable {
            cause: format!("{what} failed: {err}{hint}"),
        }
    }

    /// A configuration or kernel-feature refusal described by `cause`.
    pub(crate) fn unavailable(cause: impl Into<String>) -> UringError {
        UringError::Unavailable {
            cause: cause.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_is_one_sentence_naming_cause_and_fallback() {
        let e = UringError::os("io_uring_setup", &io::Error::from_raw_os_error(libc::EPERM));
        let text = e.to_string();
        assert!(text.starts_with("io_uring is not usable here: io_uring_setup failed: "));
        assert!(text.contains("io_uring_disabled"));
        assert!(text.ends_with("use the glommio runtime instead"));
        assert_eq!(text.matches(". ").count(), 0, "one sentence: {text}");
    }
}
