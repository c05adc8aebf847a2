//! Which driver runs the workload ([`Driver`], as `--driver` names it) and the CQL protocol
//! versions the drivers speak ([`newest_protocol`], and [`common_protocol`], the one a
//! comparison of several pins).

/// Which driver runs the workload.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub(crate) enum Driver {
    /// doppio on glommio.
    #[serde(rename = "doppio")]
    Doppio,
    /// doppio on its own io_uring runtime.
    #[serde(rename = "doppio-uring")]
    DoppioUring,
    /// doppio on its own io_uring runtime in SQPOLL mode (a kernel thread per shard takes
    /// the submissions; see [`SqPollOptions`](super::options::SqPollOptions)).
    #[serde(rename = "doppio-uring-sqpoll")]
    DoppioUringSqpoll,
    /// scylla-rust-driver on tokio.
    #[serde(rename = "scylla")]
    Scylla,
    /// No driver: requests complete at once without I/O (the engine's own cost).
    #[serde(rename = "null")]
    Null,
}

impl Driver {
    /// Its name in reports and on the command line.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Driver::Doppio => "doppio",
            Driver::DoppioUring => "doppio-uring",
            Driver::DoppioUringSqpoll => "doppio-uring-sqpoll",
            Driver::Scylla => "scylla",
            Driver::Null => "null",
        }
    }

    /// Every driver, in the order `--driver`'s help lists them.
    pub(crate) const ALL: [Driver; 5] = [
        Driver::Doppio,
        Driver::DoppioUring,
        Driver::DoppioUringSqpoll,
        Driver::Scylla,
        Driver::Null,
    ];

    /// Parses `doppio`, `doppio-uring`, `doppio-uring-sqpoll`, `scylla` or `null`.
    pub(crate) fn parse(s: &str) -> Result<Self, UnknownDriver> {
        let wanted = s.trim();
        Self::ALL
            .into_iter()
            .find(|d| d.name() == wanted)
            .ok_or_else(|| UnknownDriver {
                name: wanted.to_owned(),
            })
    }
}

/// A `--driver` name that is none of [`Driver::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown driver `{name}` (doppio, doppio-uring, doppio-uring-sqpoll, scylla or null)")]
pub struct UnknownDriver {
    /// The name given.
    pub name: String,
}

/// The newest CQL protocol version `driver` speaks (`None`: it speaks none, the null
/// backend).
pub(crate) fn newest_protocol(driver: Driver) -> Option<u8> {
    match driver {
        Driver::Doppio | Driver::DoppioUring | Driver::DoppioUringSqpoll => Some(5),
        Driver::Scylla => Some(4),
        Driver::Null => None,
    }
}

/// The version a run of `drivers` pins when `--protocol` is not given: the newest that all
/// of them speak when they differ (v4 when scylla-rust-driver is among them), so that every
/// backend of a comparison does the same framing work; `None` (each backend negotiates the
/// newest the node offers) when they agree.
pub(crate) fn common_protocol(drivers: &[Driver]) -> Option<u8> {
    let newest = drivers.iter().filter_map(|&d| newest_protocol(d));
    let (oldest, most) = (newest.clone().min()?, newest.max()?);
    (oldest < most).then_some(oldest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn driver_names_round_trip_and_an_unknown_one_lists_them() {
        for d in Driver::ALL {
            assert_eq!(Driver::parse(d.name()), Ok(d));
            assert_eq!(Driver::parse(&format!(" {} ", d.name())), Ok(d));
        }
        let e = Driver::parse("scyla").unwrap_err();
        assert_eq!(
            e,
            UnknownDriver {
                name: "scyla".into()
            }
        );
        let m = e.to_string();
        assert!(
            m.contains("unknown driver `scyla`") && m.contains("doppio-uring-sqpoll"),
            "{m}"
        );
    }

    #[test]
    fn backends_compared_in_one_run_speak_the_newest_protocol_they_all_speak() {
        use Driver::*;
        assert_eq!(common_protocol(&[Doppio, DoppioUring, Scylla]), Some(4));
        assert_eq!(common_protocol(&[DoppioUring, Scylla]), Some(4));
        assert_eq!(common_protocol(&[Doppio, DoppioUring]), None);
        assert_eq!(common_protocol(&[Scylla]), None);
        assert_eq!(common_protocol(&[]), None);
        // The null backend speaks no protocol: it changes nothing.
        assert_eq!(common_protocol(&[Null, Scylla, Doppio]), Some(4));
        assert_eq!(common_protocol(&[Null, Doppio]), None);
    }
}
