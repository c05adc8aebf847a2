//! A password as the bench holds it: its `Debug` and `Display` print `<redacted>`, so that
//! no `{:?}` of the options (a log line, a panic message, an error) can carry it; only
//! `Secret::expose` gives the text, where a backend hands it to its driver. The command
//! line a report keeps goes through [`redact_argv`].

/// A secret string (the `--password` / `DOPPIO_PASSWORD` value).
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// The secret itself, for the one place that must send it.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl From<String> for Secret {
    fn from(s: String) -> Self {
        Self(s)
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

impl std::fmt::Display for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

/// The command line as reports keep it: the value of `--password` (given as the next
/// argument or after `=`), and of cassandra-stress's `password=` (`doppio stress`),
/// replaced by `<redacted>`.
pub fn redact_argv(argv: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out = Vec::new();
    let mut hide_next = false;
    for arg in argv {
        if std::mem::take(&mut hide_next) {
            out.push("<redacted>".to_owned());
        } else if arg == "--password" {
            hide_next = true;
            out.push(arg);
        } else if arg.starts_with("--password=") {
            out.push("--password=<redacted>".to_owned());
        } else if arg.to_ascii_lowercase().starts_with("password=") {
            // `doppio stress -- ... -mode user=U password=P`.
            out.push("password=<redacted>".to_owned());
        } else {
            out.push(arg);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::Cli;

    #[test]
    fn a_password_never_prints_from_the_options_that_hold_it() {
        let s = Secret::from("hunter2-xyz".to_owned());
        assert_eq!(s.expose(), "hunter2-xyz");
        assert_eq!(format!("{s} {s:?}"), "<redacted> <redacted>");
        let cli = Cli::try_parse_from([
            "doppio",
            "run",
            "-w",
            "empty",
            "127.0.0.1:9042",
            "--user",
            "u",
            "--password",
            "hunter2-xyz",
        ])
        .unwrap();
        let argv = [
            "doppio",
            "run",
            "--password",
            "a",
            "--password=b",
            "--user",
            "u",
        ];
        assert_eq!(
            redact_argv(argv.map(String::from)),
            [
                "doppio",
                "run",
                "--password",
                "<redacted>",
                "--password=<redacted>",
                "--user",
                "u"
            ]
        );
        let shown = format!("{cli:?} {cli:#?}");
        assert!(!shown.contains("hunter2-xyz"), "{shown}");
        assert!(shown.contains("<redacted>"), "{shown}");
        // cassandra-stress's `-mode user=U password=P` after `doppio stress --`.
        let argv = ["doppio", "stress", "--", "-mode", "user=u", "PASSWORD=p"];
        assert_eq!(
            redact_argv(argv.map(String::from))[3..],
            ["-mode", "user=u", "password=<redacted>"]
        );
    }
}
