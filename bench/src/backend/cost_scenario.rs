//! The scenarios of `doppio cost` (instructions and allocations per request, under
//! Valgrind): what each one asks, and what the stub must answer for it. Both drivers run
//! the same statements with the same values, unpaged unless the scenario pages, protocol v4
//! (what both speak), no compression, one connection, every row of every result decoded.

/// One scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Scenario {
    /// Connect, prepare, close: no request (its figure is the run's whole cost).
    Empty,
    /// A prepared INSERT of two blobs.
    Insert,
    /// A prepared SELECT answered by one row, unpaged.
    Select1,
    /// A prepared SELECT answered by 100 rows, unpaged.
    Select100,
    /// A prepared SELECT of 100 rows read in pages of 10 (one request is all ten pages).
    Paged,
    /// An unlogged BATCH of 64 prepared INSERTs.
    Batch64,
}

impl Scenario {
    /// Every scenario, in table order.
    pub(crate) const ALL: [Scenario; 6] = [
        Scenario::Empty,
        Scenario::Insert,
        Scenario::Select1,
        Scenario::Select100,
        Scenario::Paged,
        Scenario::Batch64,
    ];

    /// Its name on the command line and in tables.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Scenario::Empty => "empty",
            Scenario::Insert => "insert",
            Scenario::Select1 => "select_1",
            Scenario::Select100 => "select_100",
            Scenario::Paged => "select_paged",
            Scenario::Batch64 => "batch_64",
        }
    }

    /// The scenario named `name`.
    pub(crate) fn parse(name: &str) -> Result<Scenario, String> {
        Scenario::ALL
            .into_iter()
            .find(|s| s.name() == name.trim())
            .ok_or_else(|| {
                let names: Vec<_> = Scenario::ALL.iter().map(|s| s.name()).collect();
                format!("unknown scenario `{name}` (one of {})", names.join(", "))
            })
    }

    /// Rows the stub answers a SELECT with.
    pub(crate) fn rows(self) -> usize {
        match self {
            Scenario::Select100 | Scenario::Paged => 100,
            _ => 1,
        }
    }

    /// Whether the scenario makes requests (all but `empty`).
    pub(crate) fn has_requests(self) -> bool {
        self != Scenario::Empty
    }
}

/// The statement each scenario prepares (the INSERT also makes the batch's entries).
pub(crate) const INSERT: &str = "INSERT INTO ks.t (k, v) VALUES (?, ?)";
/// The SELECT of the select scenarios.
pub(crate) const SELECT: &str = "SELECT v FROM ks.t WHERE k = ?";
/// Statements in the batch scenario's BATCH.
pub(crate) const BATCH_SIZE: usize = 64;
/// Rows per page in the paged scenario.
pub(crate) const PAGE_SIZE: i32 = 10;
/// Bytes of each row's one blob column in the stub's answers.
pub(crate) const ROW_BYTES: usize = 8;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_scenario_is_named_and_parsed_back() {
        for s in Scenario::ALL {
            assert_eq!(Scenario::parse(s.name()), Ok(s));
        }
        let e = Scenario::parse("select").unwrap_err();
        assert!(e.contains("select_1, select_100"), "{e}");
    }
}
