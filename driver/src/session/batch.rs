//! One batch type for prepared and unprepared statements: [`Batch`] (its kind, its
//! statements and its settings) and [`BatchValues`] (each statement's values, per run).
//!
//! A batch is built once and run many times with other values, as a prepared statement is:
//! `Session::batch(&batch, &values)`. Its statements are written into the frame one at a
//! time, each with its values as `values` hands them out: nothing is collected or allocated
//! per run.
//!
//! Invariant: a run binds exactly one set of values per statement (a count that differs is
//! refused before anything is sent).

use doppio_proto::error::Result as ProtoResult;
use doppio_proto::request::{BatchElements, BatchStatement, BatchType};
use doppio_proto::values::QueryValues;
use doppio_proto::ProtoError;

use super::prepared::PreparedStatement;
use super::statement::{Statement, StatementConfig};

/// One statement of a [`Batch`].
#[derive(Debug, Clone)]
pub(super) enum BatchEntry {
    /// Prepared: its id is written, its values checked against its bind markers.
    Prepared(PreparedStatement),
    /// CQL text, parsed by the node on every run.
    Query(String),
}

/// A BATCH: its kind (logged, unlogged, counter), its statements (prepared or not, in any
/// mix) and its settings ([`StatementConfig`]: consistency, serial consistency, timestamp,
/// tracing, idempotence, timeout; a page size means nothing to a batch). Built once, run
/// with [`Session::batch`](super::Session::batch) and other values each time.
///
/// It is routed as its first statement is when that one is prepared and binds its
/// partition key (to one of its replicas), else to any node; a node that forgot one of its
/// prepared statements gets it prepared again and the batch once more.
#[derive(Debug, Clone)]
pub struct Batch {
    kind: BatchType,
    entries: Vec<BatchEntry>,
    config: StatementConfig,
}

impl Batch {
    /// An empty batch of `kind` with the session's defaults.
    pub fn new(kind: BatchType) -> Self {
        Self {
            kind,
            entries: Vec::new(),
            config: StatementConfig::default(),
        }
    }

    /// Adds a prepared statement (its own settings are not used: the batch's are).
    pub fn append_prepared(&mut self, statement: &PreparedStatement) -> &mut Self {
        self.entries.push(BatchEntry::Prepared(statement.clone()));
        self
    }

    /// Adds an unprepared statement (its own settings are not used: the batch's are).
    pub fn append_query(&mut self, statement: impl Into<Statement>) -> &mut Self {
        let statement = statement.into();
        self.entries
            .push(BatchEntry::Query(statement.cql().to_owned()));
        self
    }

    /// The batch with a prepared statement added.
    pub fn with_prepared(mut self, statement: &PreparedStatement) -> Self {
        self.append_prepared(statement);
        self
    }

    /// The batch with an unprepared statement added.
    pub fn with_query(mut self, statement: impl Into<Statement>) -> Self {
        self.append_query(statement);
        self
    }

    /// Logged, unlogged or counter.
    pub fn kind(&self) -> BatchType {
        self.kind
    }

    /// How many statements.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it has no statement.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The prepared statement at `k`, if that one is prepared.
    pub fn prepared(&self, k: usize) -> Option<&PreparedStatement> {
        match self.entries.get(k)? {
            BatchEntry::Prepared(p) => Some(p),
            BatchEntry::Query(_) => None,
        }
    }

    /// Its settings.
    pub fn config(&self) -> &StatementConfig {
        &self.config
    }

    /// Its settings, to change.
    pub fn config_mut(&mut self) -> &mut StatementConfig {
        &mut self.config
    }

    /// The batch with its settings changed by `f`.
    pub fn with_config(mut self, f: impl FnOnce(&mut StatementConfig)) -> Self {
        f(&mut self.config);
        self
    }

    /// The prepared statement whose id is `id`, if the batch has one.
    pub(super) fn prepared_with_id(&self, id: &[u8]) -> Option<&PreparedStatement> {
        self.entries.iter().find_map(|e| match e {
            BatchEntry::Prepared(p) if p.inner.id.borrow().as_ref() == id => Some(p),
            _ => None,
        })
    }
}

/// The values of a run of a [`Batch`], one set per statement, handed out one at a time:
/// a tuple of value sets (each a tuple, a slice, named values: any
/// [`QueryValues`]; `()` for a statement without bind markers), a slice, array or `Vec`
/// of one type of set, or a caller's own type that makes statement `k`'s values when asked
/// (so that nothing is collected per run).
pub trait BatchValues {
    /// How many sets of values (one per statement).
    fn len(&self) -> usize;

    /// Whether there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Calls `f` with statement `k`'s values.
    fn with_values(
        &self,
        k: usize,
        f: &mut dyn FnMut(&dyn QueryValues) -> ProtoResult<()>,
    ) -> ProtoResult<()>;
}

fn no_values(k: usize, len: usize) -> ProtoError {
    ProtoError::InvalidValue {
        what: "batch values",
        detail: format!("no values for statement {k} (values for {len})"),
    }
}

impl<V: QueryValues> BatchValues for [V] {
    fn len(&self) -> usize {
        <[V]>::len(self)
    }

    fn with_values(
        &self,
        k: usize,
        f: &mut dyn FnMut(&dyn QueryValues) -> ProtoResult<()>,
    ) -> ProtoResult<()> {
        match self.get(k) {
            Some(v) => f(v),
            None => Err(no_values(k, <[V]>::len(self))),
        }
    }
}

impl<V: QueryValues, const N: usize> BatchValues for [V; N] {
    fn len(&self) -> usize {
        N
    }

    fn with_values(
        &self,
        k: usize,
        f: &mut dyn FnMut(&dyn QueryValues) -> ProtoResult<()>,
    ) -> ProtoResult<()> {
        self.as_slice().with_values(k, f)
    }
}

impl<V: QueryValues> BatchValues for Vec<V> {
    fn len(&self) -> usize {
        Vec::len(self)
    }

    fn with_values(
        &self,
        k: usize,
        f: &mut dyn FnMut(&dyn QueryValues) -> ProtoResult<()>,
    ) -> ProtoResult<()> {
        self.as_slice().with_values(k, f)
    }
}

impl<B: BatchValues + ?Sized> BatchValues for &B {
    fn len(&self) -> usize {
        (**self).len()
    }

    fn with_values(
        &self,
        k: usize,
        f: &mut dyn FnMut(&dyn QueryValues) -> ProtoResult<()>,
    ) -> ProtoResult<()> {
        (**self).with_values(k, f)
    }
}

macro_rules! tuple_batch_values {
    ($($n:literal => ($($i:tt $T:ident),+);)+) => {$(
        /// One set of values per statement, each of its own type.
        impl<$($T: QueryValues),+> BatchValues for ($($T,)+) {
            fn len(&self) -> usize {
                $n
            }

            fn with_values(
                &self,
                k: usize,
                f: &mut dyn FnMut(&dyn QueryValues) -> ProtoResult<()>,
            ) -> ProtoResult<()> {
                match k {
                    $($i => f(&self.$i),)+
                    _ => Err(no_values(k, $n)),
                }
            }
        }
    )+};
}

tuple_batch_values! {
    1 => (0 A);
    2 => (0 A, 1 B);
    3 => (0 A, 1 B, 2 C);
    4 => (0 A, 1 B, 2 C, 3 D);
    5 => (0 A, 1 B, 2 C, 3 D, 4 E);
    6 => (0 A, 1 B, 2 C, 3 D, 4 E, 5 F);
    7 => (0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G);
    8 => (0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H);
}

/// A batch's statements with one run's values, as the encoder takes them: each prepared
/// statement's id borrowed while it is written (the encoding does not wait, so a
/// re-prepare cannot change it meanwhile).
pub(super) struct Bound<'b, V: ?Sized> {
    pub(super) batch: &'b Batch,
    pub(super) values: &'b V,
}

impl<V: BatchValues + ?Sized> BatchElements for Bound<'_, V> {
    fn len(&self) -> usize {
        self.batch.len()
    }

    fn with_element(
        &self,
        k: usize,
        f: &mut dyn FnMut(&BatchStatement<'_>) -> ProtoResult<()>,
    ) -> ProtoResult<()> {
        match self.batch.entries.get(k) {
            Some(BatchEntry::Prepared(statement)) => {
                let id = statement.inner.id.borrow();
                let columns = Some(statement.inner.metadata.columns.as_slice());
                self.values.with_values(k, &mut |values| {
                    f(&BatchStatement::Prepared {
                        id: &id,
                        values,
                        columns,
                    })
                })
            }
            Some(BatchEntry::Query(query)) => self
                .values
                .with_values(k, &mut |values| f(&BatchStatement::Query { query, values })),
            None => Err(ProtoError::InvalidValue {
                what: "batch statement",
                detail: format!("no statement {k} of {}", self.batch.len()),
            }),
        }
    }
}

/// Refuses values whose count is not the batch's (before anything is sent).
pub(super) fn check_count(batch: &Batch, values: &(impl BatchValues + ?Sized)) -> ProtoResult<()> {
    if values.len() == batch.len() {
        return Ok(());
    }
    Err(ProtoError::InvalidValue {
        what: "batch values",
        detail: format!(
            "{} sets of values for {} statements",
            values.len(),
            batch.len()
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(values: &dyn BatchValues) -> Vec<usize> {
        (0..values.len())
            .map(|k| {
                let mut n = 0;
                values
                    .with_values(k, &mut |v| {
                        n = v.count();
                        Ok(())
                    })
                    .expect("values for each statement");
                n
            })
            .collect()
    }

    #[test]
    fn values_are_handed_out_per_statement_and_a_missing_set_is_an_error() {
        assert_eq!(counts(&((1i32,), (), (2i32, "x"))), vec![1, 0, 2]);
        assert_eq!(counts(&[(1i32,), (2i32,)]), vec![1, 1]);
        assert_eq!(counts(&vec![(1i32, 2i32)]), vec![2]);
        let slice: &[(i32,)] = &[(1,), (2,), (3,)];
        assert_eq!(counts(&slice), vec![1, 1, 1]);
        let err = ((1i32,),)
            .with_values(1, &mut |_| Ok(()))
            .expect_err("one set only");
        assert!(
            err.to_string().contains("no values for statement 1"),
            "{err}"
        );
    }

    #[test]
    fn a_count_that_is_not_the_batchs_is_refused() {
        let batch = Batch::new(BatchType::Logged)
            .with_query("INSERT INTO t (k) VALUES (1)")
            .with_query("INSERT INTO t (k) VALUES (2)");
        assert!(check_count(&batch, &((), ())).is_ok());
        let err = check_count(&batch, &((),)).expect_err("one set for two statements");
        assert!(
            err.to_string()
                .contains("1 sets of values for 2 statements"),
            "{err}"
        );
    }
}
