//! Execution profiles: named sets of settings that many statements share
//! ([`ExecutionProfile`]), between a statement's own settings and the session's defaults.
//!
//! A statement's setting wins over its profile's, and the profile's over the session's
//! ([`SessionConfig`](super::SessionConfig)). A profile also carries what a single
//! statement cannot: a retry policy and speculative execution of its own.
//!
//! Invariant: a profile does not change once built (statements share it by an `Arc`; reading
//! it on the request path takes no lock and touches no atomic).

use std::sync::Arc;
use std::time::Duration;

use doppio_proto::consistency::Consistency;

use super::config::SpeculativeExecution;
use super::retry::RetryPolicy;

/// Settings shared by the statements that name it (`StatementConfig::profile`): "reads
/// at LOCAL_ONE with 200 ms timeouts, retried on the next node", "writes at QUORUM, never
/// retried". Cheap to clone (an `Arc`); `Send + Sync`, so one profile may be made once and
/// handed to every shard. Built with [`ExecutionProfile::builder`].
#[derive(Clone, Default)]
pub struct ExecutionProfile(Arc<Settings>);

#[derive(Default)]
struct Settings {
    consistency: Option<Consistency>,
    serial_consistency: Option<Consistency>,
    timeout: Option<Duration>,
    page_size: Option<i32>,
    retry_policy: Option<Arc<dyn RetryPolicy>>,
    speculative: Option<SpeculativeExecution>,
}

impl std::fmt::Debug for ExecutionProfile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = &self.0;
        f.debug_struct("ExecutionProfile")
            .field("consistency", &s.consistency)
            .field("serial_consistency", &s.serial_consistency)
            .field("timeout", &s.timeout)
            .field("page_size", &s.page_size)
            .field("retry_policy", &s.retry_policy)
            .field("speculative", &s.speculative)
            .finish()
    }
}

/// Two handles on one profile are equal; two profiles built alike are not (a profile is
/// shared by identity, as a policy object is).
impl PartialEq for ExecutionProfile {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for ExecutionProfile {}

impl ExecutionProfile {
    /// A profile with every setting left to the session, to set with the builder's methods.
    pub fn builder() -> ExecutionProfileBuilder {
        ExecutionProfileBuilder(Settings::default())
    }

    /// Consistency.
    pub fn consistency(&self) -> Option<Consistency> {
        self.0.consistency
    }

    /// Serial consistency.
    pub fn serial_consistency(&self) -> Option<Consistency> {
        self.0.serial_consistency
    }

    /// How long a run waits for its answer.
    pub fn timeout(&self) -> Option<Duration> {
        self.0.timeout
    }

    /// Rows per page of paged calls.
    pub fn page_size(&self) -> Option<i32> {
        self.0.page_size
    }

    /// The retry policy.
    pub fn retry_policy(&self) -> Option<&dyn RetryPolicy> {
        self.0.retry_policy.as_deref()
    }

    /// Speculative execution (`max: 0` turns the session's off for these statements).
    pub fn speculative_execution(&self) -> Option<SpeculativeExecution> {
        self.0.speculative
    }
}

/// Builds an [`ExecutionProfile`]; every setting not given is left to the session.
#[must_use]
pub struct ExecutionProfileBuilder(Settings);

impl std::fmt::Debug for ExecutionProfileBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecutionProfileBuilder")
            .finish_non_exhaustive()
    }
}

impl ExecutionProfileBuilder {
    /// Consistency.
    pub fn consistency(mut self, consistency: Consistency) -> Self {
        self.0.consistency = Some(consistency);
        self
    }

    /// Serial consistency (of conditional statements).
    pub fn serial_consistency(mut self, consistency: Consistency) -> Self {
        self.0.serial_consistency = Some(consistency);
        self
    }

    /// How long a run waits for its answer.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.0.timeout = Some(timeout);
        self
    }

    /// Rows per page of `*_single_page` and `*_iter` (0 or less: the whole result in one).
    pub fn page_size(mut self, rows: i32) -> Self {
        self.0.page_size = Some(rows);
        self
    }

    /// Which failed runs are sent again, and where.
    pub fn retry_policy(mut self, policy: Arc<dyn RetryPolicy>) -> Self {
        self.0.retry_policy = Some(policy);
        self
    }

    /// Speculative execution of idempotent statements (`max: 0`: none, whatever the
    /// session's).
    pub fn speculative_execution(mut self, spec: SpeculativeExecution) -> Self {
        self.0.speculative = Some(spec);
        self
    }

    /// The profile.
    pub fn build(self) -> ExecutionProfile {
        ExecutionProfile(Arc::new(self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::retry::NoRetry;

    #[test]
    fn a_profile_keeps_what_it_was_built_with_and_is_equal_to_its_clones_only() {
        let p = ExecutionProfile::builder()
            .consistency(Consistency::LocalOne)
            .timeout(Duration::from_millis(200))
            .retry_policy(Arc::new(NoRetry))
            .build();
        assert_eq!(p.consistency(), Some(Consistency::LocalOne));
        assert_eq!(p.timeout(), Some(Duration::from_millis(200)));
        assert!(p.retry_policy().is_some());
        assert_eq!(p.serial_consistency(), None);
        assert_eq!(p.clone(), p);
        assert_ne!(ExecutionProfile::default(), ExecutionProfile::default());
    }

    fn is_send_sync<T: Send + Sync>() {}

    #[test]
    fn a_profile_can_be_handed_to_every_shard() {
        is_send_sync::<ExecutionProfile>();
    }
}
