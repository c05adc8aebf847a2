//! `--retries N` in the bench's own words: what a failed attempt says about its statement
//! ([`AttemptFailure`]), where the request goes next ([`RetryDecision`]), and the policy that
//! decides it ([`RetryPolicy`], with one request's count of retries, [`Attempts`]). It
//! names no driver.
//!
//! A backend whose driver takes a retry policy (scylla-rust-driver) maps its errors onto
//! [`AttemptFailure`] and follows these decisions; doppio runs its own driver's
//! `DefaultRetryPolicy`, and a unit test of `backend::doppio` walks every failure and
//! checks that the two decide alike, so that a comparison under faults resends the same
//! failed requests on both backends.
//!
//! The rules (those of doppio's policy): a statement that is not idempotent is sent again
//! only when the node's answer proves it did not run, or nothing was sent; a lost answer,
//! a coordinator's SERVER_ERROR or a replicas' timeout is retried only for idempotent
//! statements (the timeout on the same node, whose replicas may just have been slow; the
//! others on the next node). A "next node" request with no other node left goes to the
//! same node only if its connection failed it ([`AttemptFailure::connection_failed`]); a node
//! that answered would answer the same, and the request ends with that answer.

/// What a failed attempt says about its statement: all a retry decision needs of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AttemptFailure {
    /// Nothing was sent (no connection, no free stream id): any node may take it.
    NotSent,
    /// The node answered that it did not run the statement (OVERLOADED, IS_BOOTSTRAPPING,
    /// UNAVAILABLE, UNPREPARED after the driver's own re-prepare): another node may.
    NotRun,
    /// The answer was lost (a client timeout, a broken connection): it may have run.
    Lost,
    /// The replicas timed out (READ_TIMEOUT, WRITE_TIMEOUT): it may have run on some; the
    /// coordinator is fine.
    ReplicasSlow,
    /// The coordinator failed (SERVER_ERROR): it may have run.
    CoordinatorFailed,
    /// Any other failure: another attempt would fail alike (a refused statement, a value
    /// that does not encode), or add to the load a rate limit sheds.
    Final,
}

impl AttemptFailure {
    /// Every failure.
    #[cfg(test)]
    pub(crate) const ALL: [AttemptFailure; 6] = [
        AttemptFailure::NotSent,
        AttemptFailure::NotRun,
        AttemptFailure::Lost,
        AttemptFailure::ReplicasSlow,
        AttemptFailure::CoordinatorFailed,
        AttemptFailure::Final,
    ];

    /// Whether the failure was the connection's (nothing sent, the answer lost), which
    /// another connection to the same node may not share.
    pub(crate) fn connection_failed(self) -> bool {
        matches!(self, AttemptFailure::NotSent | AttemptFailure::Lost)
    }
}

/// Where a failed request goes next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RetryDecision {
    /// Again to the node that failed it.
    RetrySameNode,
    /// To the next node of the plan.
    RetryNextNode,
    /// Nowhere: the request fails with this error.
    Fail,
}

/// The bench's retry policy: at most `max_retries` retries per request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RetryPolicy {
    /// Retries per request at most (`--retries`).
    pub(crate) max_retries: u32,
}

impl RetryPolicy {
    /// The decision for a request that failed with `failure` after `retries` retries.
    pub(crate) fn decide(
        self,
        failure: AttemptFailure,
        idempotent: bool,
        retries: u32,
    ) -> RetryDecision {
        if retries >= self.max_retries {
            return RetryDecision::Fail;
        }
        match failure {
            AttemptFailure::NotSent | AttemptFailure::NotRun => RetryDecision::RetryNextNode,
            AttemptFailure::Lost | AttemptFailure::CoordinatorFailed if idempotent => {
                RetryDecision::RetryNextNode
            }
            AttemptFailure::ReplicasSlow if idempotent => RetryDecision::RetrySameNode,
            _ => RetryDecision::Fail,
        }
    }
}

/// One request's retries so far, on a cluster of `nodes` nodes: the policy's decision where
/// the plan has run out turned into the same node or the end.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Attempts {
    policy: RetryPolicy,
    nodes: usize,
    retries: u32,
    /// Retries sent to another node: at `nodes - 1`, every other node has been tried.
    moves: usize,
}

impl Attempts {
    /// A request's attempts, none retried yet, on a cluster of `nodes` nodes.
    pub(crate) fn new(policy: RetryPolicy, nodes: usize) -> Self {
        Self {
            policy,
            nodes,
            retries: 0,
            moves: 0,
        }
    }

    /// Where the request goes after an attempt failed with `failure`: the next node while
    /// one is left, else the same node if its connection failed it, else nowhere.
    pub(crate) fn next(&mut self, failure: AttemptFailure, idempotent: bool) -> RetryDecision {
        match self.policy.decide(failure, idempotent, self.retries) {
            RetryDecision::Fail => return RetryDecision::Fail,
            RetryDecision::RetrySameNode => {}
            RetryDecision::RetryNextNode if self.moves + 1 < self.nodes => {
                self.moves += 1;
                self.retries += 1;
                return RetryDecision::RetryNextNode;
            }
            RetryDecision::RetryNextNode if failure.connection_failed() => {}
            RetryDecision::RetryNextNode => return RetryDecision::Fail,
        }
        self.retries += 1;
        RetryDecision::RetrySameNode
    }

    /// Counts from the start again (the driver started the request over).
    pub(crate) fn reset(&mut self) {
        self.retries = 0;
        self.moves = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The decisions of a request failing with `failure` every time, until it stops.
    fn decisions(
        nodes: usize,
        max: u32,
        failure: AttemptFailure,
        idempotent: bool,
    ) -> Vec<RetryDecision> {
        let mut attempts = Attempts::new(RetryPolicy { max_retries: max }, nodes);
        let mut out = Vec::new();
        loop {
            let d = attempts.next(failure, idempotent);
            out.push(d);
            if d == RetryDecision::Fail || out.len() > 10 {
                return out;
            }
        }
    }

    #[test]
    fn a_statement_not_idempotent_is_resent_only_when_it_did_not_run() {
        use RetryDecision::{Fail, RetryNextNode as Next, RetrySameNode as Same};
        for failure in AttemptFailure::ALL {
            let (plain, idempotent) = match failure {
                AttemptFailure::NotSent | AttemptFailure::NotRun => {
                    (vec![Next, Next, Fail], vec![Next, Next, Fail])
                }
                AttemptFailure::Lost | AttemptFailure::CoordinatorFailed => {
                    (vec![Fail], vec![Next, Next, Fail])
                }
                AttemptFailure::ReplicasSlow => (vec![Fail], vec![Same, Same, Fail]),
                AttemptFailure::Final => (vec![Fail], vec![Fail]),
            };
            assert_eq!(decisions(3, 2, failure, false), plain, "{failure:?}");
            assert_eq!(decisions(3, 2, failure, true), idempotent, "{failure:?}");
        }
    }

    #[test]
    fn a_next_node_retry_stays_on_the_node_only_when_its_connection_failed() {
        use RetryDecision::{Fail, RetryNextNode as Next, RetrySameNode as Same};
        assert_eq!(decisions(1, 3, AttemptFailure::NotRun, true), vec![Fail]);
        assert_eq!(
            decisions(2, 3, AttemptFailure::NotRun, true),
            vec![Next, Fail]
        );
        assert_eq!(
            decisions(1, 3, AttemptFailure::Lost, true),
            vec![Same, Same, Same, Fail]
        );
        assert_eq!(
            decisions(2, 3, AttemptFailure::Lost, true),
            vec![Next, Same, Same, Fail]
        );
    }

    #[test]
    fn a_reset_request_counts_from_the_start() {
        let mut attempts = Attempts::new(RetryPolicy { max_retries: 1 }, 1);
        let first = RetryDecision::RetrySameNode;
        assert_eq!(attempts.next(AttemptFailure::ReplicasSlow, true), first);
        assert_eq!(
            attempts.next(AttemptFailure::ReplicasSlow, true),
            RetryDecision::Fail
        );
        attempts.reset();
        assert_eq!(attempts.next(AttemptFailure::ReplicasSlow, true), first);
    }
}
