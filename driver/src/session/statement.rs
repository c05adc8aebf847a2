//! What a statement carries and what one page of its result is: [`StatementConfig`] (the
//! settings a statement brings to every run of it), [`Statement`] (unprepared CQL with its
//! settings), [`PagingState`] (where a page starts) and [`Page`] (one page of a result,
//! saying whether more follow).
//!
//! Every call of the session says in its name what it returns: `*_unpaged` the whole result
//! (a [`QueryResult`]), `*_single_page` one [`Page`] and where the next starts, `*_iter`
//! a [`PageStream`](super::PageStream) across all pages. No call hands back part of a result
//! as if it were all of it.
//!
//! Invariant: the settings a request runs with are the statement's where set, else the
//! session's ([`StatementConfig::options`]); the paging state is the call's, never the
//! statement's.

use std::ops::Deref;
use std::time::Duration;

use bytes::Bytes;
use doppio_proto::consistency::Consistency;

use super::config::StatementOptions;
use super::profile::ExecutionProfile;
use crate::result::QueryResult;

/// The settings a statement carries to every run of it; a field left `None` (or `false`)
/// takes its profile's ([`ExecutionProfile`]), else the session's default
/// ([`SessionConfig`](super::SessionConfig)).
///
/// Set on a statement with `config_mut()` (or `with_config`); fields may be added in a
/// minor release, so build one from [`StatementConfig::default`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct StatementConfig {
    /// Consistency.
    pub consistency: Option<Consistency>,
    /// Serial consistency (of conditional statements).
    pub serial_consistency: Option<Consistency>,
    /// The write timestamp, microseconds since the epoch (`None`: the node's clock).
    pub timestamp: Option<i64>,
    /// Rows per page of `*_single_page` and `*_iter` (`None`: the session's page size;
    /// 0 or less: the whole result in one page). `*_unpaged` ignores it.
    pub page_size: Option<i32>,
    /// Ask the node to trace each run (its result carries the tracing id).
    pub tracing: bool,
    /// Whether running the statement twice is safe: only an idempotent statement is retried
    /// after a failure that may have applied it, or sent to a second node speculatively.
    pub idempotent: bool,
    /// How long a run waits for its answer (`None`: the connection's request timeout).
    pub timeout: Option<Duration>,
    /// Settings shared with other statements, below the statement's own: consistency,
    /// serial consistency, timeout, page size, and what only a profile sets (a retry
    /// policy, speculative execution).
    pub profile: Option<ExecutionProfile>,
}

/// How a call pages its result.
#[derive(Debug, Clone, Copy)]
pub(super) enum Paging<'a> {
    /// The whole result in one answer (no page size).
    Unpaged,
    /// One page of the statement's (or the session's) size, from `state`.
    Page(&'a PagingState),
}

impl<'a> Paging<'a> {
    /// The page size and paging state a request paged so sends, where the statement's page
    /// size (its own, else its profile's) is `statement_page_size`.
    #[inline]
    pub(super) fn page(self, statement_page_size: Option<i32>) -> (Option<i32>, Option<&'a [u8]>) {
        match self {
            // Some(0): no page size on the wire, whatever the session's default.
            Paging::Unpaged => (Some(0), None),
            Paging::Page(state) => (statement_page_size, state.as_bytes()),
        }
    }
}

impl StatementConfig {
    /// Whether a request of this statement runs with the session's settings but for its
    /// idempotence and page size: no profile, nothing else set. Such a request is written
    /// from the statement's template (the settings half of `attempt::templated`, read
    /// here without resolving the options first).
    #[inline]
    pub(super) fn is_plain(&self) -> bool {
        // Every field named, so that a new one must be placed here.
        let StatementConfig {
            consistency,
            serial_consistency,
            timestamp,
            page_size: _,
            tracing,
            idempotent: _,
            timeout,
            profile,
        } = self;
        consistency.is_none()
            && serial_consistency.is_none()
            && timestamp.is_none()
            && !tracing
            && timeout.is_none()
            && profile.is_none()
    }

    /// The options one request with this configuration runs with, paged as `paging` says.
    #[inline]
    pub(super) fn options<'a>(&'a self, paging: Paging<'a>) -> StatementOptions<'a> {
        let profile = self.profile.as_ref();
        let (page_size, paging_state) = match paging {
            Paging::Unpaged => paging.page(None),
            Paging::Page(_) => paging.page(self.page_size.or(profile.and_then(|p| p.page_size()))),
        };
        let Some(profile) = profile else {
            // The common case: no profile, nothing to look up.
            return StatementOptions {
                consistency: self.consistency,
                serial_consistency: self.serial_consistency,
                timestamp: self.timestamp,
                page_size,
                paging_state,
                tracing: self.tracing,
                idempotent: self.idempotent,
                timeout: self.timeout,
                retry_policy: None,
                speculative: None,
            };
        };
        StatementOptions {
            consistency: self.consistency.or(profile.consistency()),
            serial_consistency: self.serial_consistency.or(profile.serial_consistency()),
            timestamp: self.timestamp,
            page_size,
            paging_state,
            tracing: self.tracing,
            idempotent: self.idempotent,
            timeout: self.timeout.or(profile.timeout()),
            retry_policy: profile.retry_policy(),
            speculative: profile.speculative_execution(),
        }
    }
}

/// An unprepared statement: its CQL text and its settings. Made from a `&str` or `String`
/// where a call takes `impl Into<Statement>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    cql: String,
    config: StatementConfig,
}

impl Statement {
    /// CQL text with the session's defaults.
    pub fn new(cql: impl Into<String>) -> Self {
        Self {
            cql: cql.into(),
            config: StatementConfig::default(),
        }
    }

    /// The CQL text.
    pub fn cql(&self) -> &str {
        &self.cql
    }

    /// Its settings.
    pub fn config(&self) -> &StatementConfig {
        &self.config
    }

    /// Its settings, to change.
    pub fn config_mut(&mut self) -> &mut StatementConfig {
        &mut self.config
    }

    /// The statement with its settings changed by `f`.
    pub fn with_config(mut self, f: impl FnOnce(&mut StatementConfig)) -> Self {
        f(&mut self.config);
        self
    }
}

impl From<&str> for Statement {
    fn from(cql: &str) -> Self {
        Self::new(cql)
    }
}

impl From<String> for Statement {
    fn from(cql: String) -> Self {
        Self::new(cql)
    }
}

impl From<&String> for Statement {
    fn from(cql: &String) -> Self {
        Self::new(cql.as_str())
    }
}

impl From<&Statement> for Statement {
    fn from(statement: &Statement) -> Self {
        statement.clone()
    }
}

/// Where a page starts: the beginning of the result ([`PagingState::start`]), or the
/// state a [`Page`] handed out for the page after it. Its bytes may be kept and handed back
/// later, also by another session ([`PagingState::from_bytes`]), to resume the result.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PagingState(Option<Bytes>);

impl PagingState {
    /// The first page.
    pub const fn start() -> Self {
        Self(None)
    }

    /// A state kept from an earlier page ([`PagingState::as_bytes`]). The node checks it;
    /// a state it did not issue for the same statement and values is refused there.
    pub fn from_bytes(bytes: impl Into<Bytes>) -> Self {
        Self(Some(bytes.into()))
    }

    /// The state's bytes, `None` at the start.
    pub fn as_bytes(&self) -> Option<&[u8]> {
        self.0.as_deref()
    }

    /// Whether this is the start of the result.
    pub fn is_start(&self) -> bool {
        self.0.is_none()
    }
}

/// One page of a result from a `*_single_page` call: its rows (it dereferences to its
/// [`QueryResult`]) and whether more follow ([`Page::next`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    result: QueryResult,
}

impl Page {
    pub(super) fn new(result: QueryResult) -> Self {
        Self { result }
    }

    /// Where the next page starts, or `None` if this was the last one.
    pub fn next(&self) -> Option<PagingState> {
        self.result
            .paging_state()
            .map(|state| PagingState(Some(state.clone())))
    }

    /// Whether this was the last page.
    pub fn is_last(&self) -> bool {
        self.result.paging_state().is_none()
    }

    /// The page as the node's result.
    pub fn into_result(self) -> QueryResult {
        self.result
    }
}

impl Deref for Page {
    type Target = QueryResult;

    fn deref(&self) -> &QueryResult {
        &self.result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unpaged_run_asks_for_no_page_whatever_the_statements_page_size() {
        let config = StatementConfig {
            page_size: Some(10),
            consistency: Some(Consistency::One),
            ..StatementConfig::default()
        };
        let o = config.options(Paging::Unpaged);
        assert_eq!((o.page_size, o.paging_state), (Some(0), None));
        assert_eq!(o.consistency, Some(Consistency::One));
    }

    #[test]
    fn a_page_run_takes_the_statements_size_and_the_calls_state() {
        let config = StatementConfig {
            page_size: Some(10),
            ..StatementConfig::default()
        };
        let state = PagingState::from_bytes(&b"abc"[..]);
        let o = config.options(Paging::Page(&state));
        assert_eq!(o.page_size, Some(10));
        assert_eq!(o.paging_state, Some(&b"abc"[..]));
        let start = PagingState::start();
        let defaults = StatementConfig::default();
        let o = defaults.options(Paging::Page(&start));
        assert_eq!((o.page_size, o.paging_state), (None, None));
    }

    #[test]
    fn a_statements_own_setting_wins_over_its_profiles_and_the_profile_over_the_session() {
        let profile = ExecutionProfile::builder()
            .consistency(Consistency::LocalOne)
            .timeout(Duration::from_millis(200))
            .page_size(50)
            .retry_policy(std::sync::Arc::new(crate::session::retry::NoRetry))
            .build();
        let config = StatementConfig {
            consistency: Some(Consistency::Quorum),
            profile: Some(profile),
            ..StatementConfig::default()
        };
        let start = PagingState::start();
        let o = config.options(Paging::Page(&start));
        assert_eq!(
            o.consistency,
            Some(Consistency::Quorum),
            "the statement's own"
        );
        assert_eq!(o.timeout, Some(Duration::from_millis(200)), "the profile's");
        assert_eq!(o.page_size, Some(50), "the profile's");
        assert!(o.retry_policy.is_some(), "the profile's");
        assert_eq!(o.serial_consistency, None, "the session's");
        assert_eq!(config.options(Paging::Unpaged).page_size, Some(0));
    }

    /// A plain statement is one whose resolved options the template path accepts: the two
    /// answers agree for every setting, so the EXECUTE future may read `is_plain` instead of
    /// resolving the options.
    #[test]
    fn a_plain_statement_is_one_whose_options_are_the_templates() {
        let start = PagingState::start();
        let plain = |c: &StatementConfig| {
            let o = c.options(Paging::Page(&start));
            o.consistency.is_none()
                && o.serial_consistency.is_none()
                && o.timestamp.is_none()
                && !o.tracing
                && o.timeout.is_none()
                && o.retry_policy.is_none()
                && o.speculative.is_none()
        };
        let mut configs = vec![StatementConfig::default()];
        let set: [fn(&mut StatementConfig); 9] = [
            |c| c.consistency = Some(Consistency::Quorum),
            |c| c.serial_consistency = Some(Consistency::Serial),
            |c| c.timestamp = Some(1),
            |c| c.tracing = true,
            |c| c.timeout = Some(Duration::from_millis(5)),
            |c| c.profile = Some(ExecutionProfile::builder().build()),
            |c| c.profile = Some(ExecutionProfile::builder().page_size(7).build()),
            // Idempotence and the page size keep a statement plain.
            |c| c.idempotent = true,
            |c| c.page_size = Some(3),
        ];
        for f in set {
            let mut c = StatementConfig::default();
            f(&mut c);
            configs.push(c);
        }
        for c in &configs {
            // An empty profile resolves to the session's settings, yet is not plain: the
            // profile is looked into on the general path only.
            let empty_profile = c.profile.is_some() && plain(c);
            assert_eq!(c.is_plain(), plain(c) && !empty_profile, "{c:?}");
        }
        assert!(!configs[6].is_plain() && !configs[7].is_plain());
        assert!(configs[8].is_plain() && configs[9].is_plain());
    }

    #[test]
    fn a_call_pages_as_it_says_whatever_the_statement_sets() {
        let state = PagingState::from_bytes(&b"abc"[..]);
        assert_eq!(Paging::Unpaged.page(Some(10)), (Some(0), None));
        assert_eq!(
            Paging::Page(&state).page(Some(10)),
            (Some(10), Some(&b"abc"[..]))
        );
        assert_eq!(Paging::Page(&PagingState::start()).page(None), (None, None));
    }

    #[test]
    fn default_settings_are_the_default_options() {
        let start = PagingState::start();
        let defaults = StatementConfig::default();
        let o = defaults.options(Paging::Page(&start));
        assert_eq!(o, StatementOptions::DEFAULT);
    }
}
