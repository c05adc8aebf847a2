//! The bench's settings as scylla-rust-driver takes them: the execution profile every
//! request runs with (consistency, serial consistency, timeout, retries, load balancing),
//! and the settings it cannot honour.

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use scylla::client::execution_profile::ExecutionProfile;
use scylla::frame::types::Consistency;
use scylla::policies::load_balancing::DefaultPolicy;
use scylla::policies::retry::{FallthroughRetryPolicy, RetryPolicy};
use scylla::statement::SerialConsistency;

use super::retry;
use crate::backend::driver::Driver;
use crate::backend::options::{ConnectOptions, Consistency as BenchConsistency};
use crate::backend::settings::{Locality, SerialConsistency as BenchSerial, SettingError};

/// scylla-rust-driver's serial consistency for the bench's.
pub(crate) fn serial_consistency(c: BenchSerial) -> SerialConsistency {
    match c {
        BenchSerial::Serial => SerialConsistency::Serial,
        BenchSerial::LocalSerial => SerialConsistency::LocalSerial,
    }
}

/// The settings scylla-rust-driver cannot honour: a backoff between retries (its retry
/// policies decide where a retry goes, never when).
pub(crate) fn check_settings(o: &ConnectOptions) -> Result<(), SettingError> {
    if o.protocol == Some(5) {
        return Err(SettingError::Unsupported {
            driver: Driver::Scylla.name(),
            option: "--protocol 5",
            why: "scylla-rust-driver speaks protocol v4 only",
        });
    }
    if o.tls.as_ref().is_some_and(|t| t.server_name.is_some()) {
        return Err(SettingError::Unsupported {
            driver: Driver::Scylla.name(),
            option: "--tls-server-name",
            why: "scylla-rust-driver checks every node's certificate against its IP address",
        });
    }
    if o.retry_backoff.is_some() {
        return Err(SettingError::Unsupported {
            driver: Driver::Scylla.name(),
            option: "--retry-backoff",
            why: "scylla-rust-driver's retry policies send a retry at once, with no delay",
        });
    }
    Ok(())
}

/// The execution profile every request runs with: the bench's consistency, serial
/// consistency, timeout and retries, and the load-balancing policy of `locality`. With
/// `--retries`, the second value is the cell to store the cluster's node count in once
/// connected (see [`retry::BenchRetry`]).
pub(crate) fn execution_profile(
    o: &ConnectOptions,
) -> (ExecutionProfile, Option<Arc<AtomicUsize>>) {
    let (retry, nodes): (Arc<dyn RetryPolicy>, _) = if o.retries == 0 {
        (Arc::new(FallthroughRetryPolicy::new()), None)
    } else {
        // The same decisions as doppio's backends make (scylla's own default policy
        // retries at most once per kind of error, and decides otherwise).
        let policy = retry::BenchRetry::new(o.retries);
        let nodes = policy.nodes();
        (Arc::new(policy), Some(nodes))
    };
    let mut profile = ExecutionProfile::builder()
        .consistency(consistency(o.consistency))
        .serial_consistency(Some(serial_consistency(o.serial_consistency)))
        .request_timeout(Some(o.request_timeout))
        .retry_policy(retry);
    if let Some(policy) = load_balancing(&o.locality) {
        profile = profile.load_balancing_policy(policy);
    }
    (profile.build(), nodes)
}

/// scylla's `DefaultPolicy` preferring `locality` (`None`: the driver's default policy).
pub(super) fn load_balancing(
    locality: &Locality,
) -> Option<Arc<dyn scylla::policies::load_balancing::LoadBalancingPolicy>> {
    let dc = locality.datacenter.clone()?;
    let builder = DefaultPolicy::builder();
    Some(
        match locality.rack.clone() {
            Some(rack) => builder.prefer_datacenter_and_rack(dc, rack),
            None => builder.prefer_datacenter(dc),
        }
        .build(),
    )
}

/// scylla-rust-driver's consistency level for the bench's.
fn consistency(c: BenchConsistency) -> Consistency {
    match c {
        BenchConsistency::Any => Consistency::Any,
        BenchConsistency::One => Consistency::One,
        BenchConsistency::Two => Consistency::Two,
        BenchConsistency::Three => Consistency::Three,
        BenchConsistency::Quorum => Consistency::Quorum,
        BenchConsistency::All => Consistency::All,
        BenchConsistency::LocalQuorum => Consistency::LocalQuorum,
        BenchConsistency::EachQuorum => Consistency::EachQuorum,
        BenchConsistency::LocalOne => Consistency::LocalOne,
    }
}
