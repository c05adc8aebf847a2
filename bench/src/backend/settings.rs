//! Driver settings a load test needs, parsed once for every backend: the serial consistency,
//! frame compression and the backoff between retries (each backend maps them to its
//! driver's types), and the check that refuses a setting a backend cannot honour instead of
//! silently ignoring it.
//!
//! Invariant: a run never starts with a setting that one of its backends would ignore; the
//! refusal names the backend and the option ([`SettingError::Unsupported`]), and the command
//! exits with 2 (it could not start).

use std::time::Duration;

use crate::units::{self, UnitError};

/// Why a driver setting cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingError {
    /// `--serial-consistency` names no serial level.
    #[error("unknown serial consistency `{0}` (SERIAL or LOCAL_SERIAL)")]
    SerialConsistency(String),
    /// `--compression` names no supported algorithm.
    #[error("unknown compression `{0}` (lz4 or none)")]
    Compression(String),
    /// `--retry-backoff` is not `BASE[,CAP]` durations.
    #[error("--retry-backoff `{text}`: {source}")]
    RetryBackoffDuration {
        /// The text given.
        text: String,
        /// Why one of its parts is not a duration.
        #[source]
        source: UnitError,
    },
    /// `--retry-backoff` with a cap below its base.
    #[error("--retry-backoff `{0}`: the cap is below the base")]
    RetryBackoffCap(String),
    /// `--rack` without `--datacenter`: a rack is named within a data center.
    #[error("--rack {0} needs --datacenter (a rack is named within its data center)")]
    RackWithoutDatacenter(String),
    /// A backend cannot honour a setting; running it would silently ignore it.
    #[error("{driver}: {option} is not supported: {why}")]
    Unsupported {
        /// The backend.
        driver: &'static str,
        /// The option, as given on the command line.
        option: &'static str,
        /// Why the backend cannot honour it.
        why: &'static str,
    },
}

/// TLS to the nodes (`--tls`): the files every backend reads (each builds its own rustls
/// configuration from them, with the ring provider).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct TlsOptions {
    /// The PEM file of the CA certificates the nodes' certificates must chain to.
    pub ca: std::path::PathBuf,
    /// The client's certificate chain and key (PEM), for nodes that require one.
    pub client_cert: Option<(std::path::PathBuf, std::path::PathBuf)>,
    /// The name the nodes' certificates must carry (default: each node's IP address).
    pub server_name: Option<String>,
}

impl TlsOptions {
    /// How a report describes it: `ca=FILE`, then `client-cert=FILE` and `server-name=NAME`
    /// when set.
    pub(crate) fn describe(&self) -> String {
        let mut text = format!("ca={}", self.ca.display());
        if let Some((cert, _)) = &self.client_cert {
            text.push_str(&format!(" client-cert={}", cert.display()));
        }
        if let Some(name) = &self.server_name {
            text.push_str(&format!(" server-name={name}"));
        }
        text
    }
}

/// The consistency of the Paxos phase of conditional statements, sent with every request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) enum SerialConsistency {
    /// `SERIAL`: Paxos across every data center.
    Serial,
    /// `LOCAL_SERIAL`: Paxos within the local data center.
    LocalSerial,
}

impl SerialConsistency {
    /// Its name as CQL spells it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            SerialConsistency::Serial => "SERIAL",
            SerialConsistency::LocalSerial => "LOCAL_SERIAL",
        }
    }

    /// Parses `SERIAL` or `LOCAL_SERIAL`, in any case.
    pub(crate) fn parse(text: &str) -> Result<Self, SettingError> {
        match text.trim().to_ascii_uppercase().as_str() {
            "SERIAL" => Ok(SerialConsistency::Serial),
            "LOCAL_SERIAL" => Ok(SerialConsistency::LocalSerial),
            _ => Err(SettingError::SerialConsistency(text.to_owned())),
        }
    }
}

/// Compression of frame bodies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) enum Compression {
    /// Uncompressed frames.
    None,
    /// lz4, when the node offers it.
    Lz4,
}

impl Compression {
    /// Its name on the command line and in reports (`lz4`, `none`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Lz4 => "lz4",
        }
    }

    /// Parses `lz4` or `none`, in any case.
    pub(crate) fn parse(text: &str) -> Result<Self, SettingError> {
        match text.trim().to_ascii_lowercase().as_str() {
            "lz4" => Ok(Compression::Lz4),
            "none" => Ok(Compression::None),
            _ => Err(SettingError::Compression(text.to_owned())),
        }
    }
}

/// The delay before each retry: exponential from `base`, at most `cap`, with full jitter
/// (random in `[0, min(cap, base * 2^retry)]`, so that many clients do not retry in step).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct RetryBackoff {
    /// The first retry's upper bound.
    pub base: Duration,
    /// No delay exceeds this.
    pub cap: Duration,
}

impl RetryBackoff {
    /// Parses `BASE[,CAP]` (`10ms,1s`); without CAP the cap is the base (every delay at most
    /// BASE).
    pub(crate) fn parse(text: &str) -> Result<Self, SettingError> {
        let duration = |part: &str| {
            units::duration(part).map_err(|source| SettingError::RetryBackoffDuration {
                text: text.to_owned(),
                source,
            })
        };
        let (base, cap) = match text.split_once(',') {
            Some((base, cap)) => (duration(base)?, duration(cap)?),
            None => {
                let base = duration(text)?;
                (base, base)
            }
        };
        if cap < base {
            return Err(SettingError::RetryBackoffCap(text.to_owned()));
        }
        Ok(Self { base, cap })
    }

    /// As the report writes it: `BASE,CAP` in humantime's grammar (`10ms,1s`).
    pub(crate) fn describe(&self) -> String {
        format!(
            "{},{}",
            humantime::format_duration(self.base),
            humantime::format_duration(self.cap)
        )
    }
}

/// Where requests should go: the local data center of the load-balancing policy and,
/// within it, a preferred rack.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Locality {
    /// The local data center (`None`: each driver's default).
    pub datacenter: Option<String>,
    /// The preferred rack within `datacenter`.
    pub rack: Option<String>,
}

impl Locality {
    /// `--datacenter` and `--rack`; a rack needs its data center.
    pub(crate) fn new(
        datacenter: Option<String>,
        rack: Option<String>,
    ) -> Result<Self, SettingError> {
        if let (None, Some(rack)) = (&datacenter, &rack) {
            return Err(SettingError::RackWithoutDatacenter(rack.clone()));
        }
        Ok(Self { datacenter, rack })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serial_consistency_and_compression_parse_in_any_case_and_refuse_the_rest() {
        assert_eq!(
            SerialConsistency::parse("local_serial"),
            Ok(SerialConsistency::LocalSerial)
        );
        assert_eq!(
            SerialConsistency::parse(" SERIAL "),
            Ok(SerialConsistency::Serial)
        );
        let e = SerialConsistency::parse("QUORUM").unwrap_err().to_string();
        assert!(e.contains("`QUORUM`") && e.contains("LOCAL_SERIAL"), "{e}");
        for c in [Compression::Lz4, Compression::None] {
            assert_eq!(Compression::parse(&c.name().to_uppercase()), Ok(c));
        }
        let e = Compression::parse("snappy").unwrap_err().to_string();
        assert!(e.contains("`snappy`") && e.contains("lz4 or none"), "{e}");
    }

    #[test]
    fn retry_backoff_reads_base_and_cap_and_refuses_a_cap_below_the_base() {
        let b = RetryBackoff::parse("10ms,1s").unwrap();
        assert_eq!(
            (b.base, b.cap),
            (Duration::from_millis(10), Duration::from_secs(1))
        );
        assert_eq!(b.describe(), "10ms,1s");
        let b = RetryBackoff::parse("50ms").unwrap();
        assert_eq!((b.base, b.cap), (Duration::from_millis(50), b.base));
        assert_eq!(
            RetryBackoff::parse("1s,10ms"),
            Err(SettingError::RetryBackoffCap("1s,10ms".into()))
        );
        let e = RetryBackoff::parse("10ms,soon").unwrap_err();
        assert!(
            matches!(e, SettingError::RetryBackoffDuration { .. }),
            "{e}"
        );
        assert!(e.to_string().contains("`soon` is not a duration"), "{e}");
    }

    #[test]
    fn a_rack_needs_its_datacenter() {
        assert_eq!(
            Locality::new(None, Some("r1".into())),
            Err(SettingError::RackWithoutDatacenter("r1".into()))
        );
        let l = Locality::new(Some("dc1".into()), Some("r1".into())).unwrap();
        assert_eq!(l.rack.as_deref(), Some("r1"));
    }
}
