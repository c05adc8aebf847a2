//! Which iteration numbers a loader draws its keys from, so that several loader machines
//! running the same workload send different requests: `--cycles START..END` names the range
//! itself, `--loader K/N` takes the K-th (1-based) of N equal slices of the workload's key
//! space ([`crate::workload::Workload::key_space`]).
//!
//! A phase's iterations are numbered 0, 1, 2, ... by the engine as before (its ordinals,
//! which say when a counted phase ends); with a range, ordinal `o` runs the iteration number
//! `START + o % (END - START)`. A counted phase fits in its range (the command line refuses a
//! count larger than the range), so each of its iterations runs once; a phase bounded by time
//! that exhausts its range wraps around to START and goes on within the range, never outside.
//!
//! Invariant: the N slices of a space cover it exactly once, in order, with no overlap;
//! their lengths differ by at most one.

use crate::units::{self, UnitError};

/// Why a range or a loader slice is not usable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CyclesError {
    /// Not `START..END`.
    #[error("`{text}` is not a range START..END of iteration numbers (such as 0..500k)")]
    RangeShape {
        /// The text given.
        text: String,
    },
    /// START or END is not a count.
    #[error("--cycles {text}: {source}")]
    RangeBound {
        /// The text given.
        text: String,
        /// Why the bound is no count.
        source: UnitError,
    },
    /// END <= START.
    #[error("--cycles {start}..{end} is empty: END (exclusive) must be greater than START")]
    EmptyRange {
        /// START.
        start: u64,
        /// END.
        end: u64,
    },
    /// Not `K/N` with whole numbers.
    #[error("`{text}` is not a loader K/N (such as 1/2: loader 1 of 2, counted from 1)")]
    LoaderShape {
        /// The text given.
        text: String,
    },
    /// `--loader index/N` outside a Kubernetes Indexed Job (or with an unreadable index).
    #[error(
        "--loader index/N takes K from {JOB_INDEX_VAR} (set by a Kubernetes Indexed Job, counted \
         from 0), which is {found}"
    )]
    JobIndex {
        /// What the variable held: `not set`, or its value quoted.
        found: String,
    },
    /// N = 0, K = 0 or K > N.
    #[error("--loader {k}/{n}: K must be between 1 and N, and N at least 1 (loaders are counted from 1)")]
    LoaderOutOfRange {
        /// K.
        k: u64,
        /// N.
        n: u64,
    },
    /// The space has fewer iterations than loaders: this loader's slice is empty.
    #[error("--loader {k}/{n}: the key space has {space} iterations, fewer than {n} loaders, so slice {k} is empty")]
    EmptySlice {
        /// K.
        k: u64,
        /// N.
        n: u64,
        /// The space's size.
        space: u64,
    },
    /// `--loader` on a workload without a key space.
    #[error("--loader: workload {workload} has no key space to split (no [load] count and no integer `rows` parameter); give --cycles START..END instead")]
    NoKeySpace {
        /// The workload.
        workload: String,
    },
    /// A counted phase longer than the range would repeat iterations (and draw those of
    /// another loader's range).
    #[error("{what} is {count} iterations, more than the {len} of --cycles/--loader's range {range}: give a shorter count or a time")]
    CountExceedsRange {
        /// Which limit (`-d`, `--warmup`).
        what: &'static str,
        /// Its count.
        count: u64,
        /// The range's length.
        len: u64,
        /// The range.
        range: CycleRange,
    },
}

/// The range in force and how it was chosen, as reports state it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cycles {
    /// The iteration numbers drawn.
    pub(crate) range: CycleRange,
    /// The loader slice it came from, if `--loader` chose it.
    pub(crate) loader: Option<LoaderSlice>,
    /// The key space the slice is of, if `--loader` chose it.
    pub(crate) key_space: Option<u64>,
}

impl Cycles {
    /// The range of `--cycles` (`range`) or `--loader` (`loader`, of the workload's
    /// `key_space`), or `None` when neither is given.
    pub(crate) fn choose(
        range: Option<CycleRange>,
        loader: Option<LoaderSlice>,
        key_space: Option<u64>,
        workload: &str,
    ) -> Result<Option<Self>, CyclesError> {
        match (range, loader) {
            (Some(range), _) => Ok(Some(Self {
                range,
                loader: None,
                key_space: None,
            })),
            (None, Some(loader)) => {
                let space = key_space.ok_or_else(|| CyclesError::NoKeySpace {
                    workload: workload.to_owned(),
                })?;
                Ok(Some(Self {
                    range: loader.of(space)?,
                    loader: Some(loader),
                    key_space: Some(space),
                }))
            }
            (None, None) => Ok(None),
        }
    }

    /// Refuses a counted phase (`what`: the option that set it) longer than the range.
    pub(crate) fn check_count(&self, what: &'static str, count: u64) -> Result<(), CyclesError> {
        if count > self.range.len() {
            return Err(CyclesError::CountExceedsRange {
                what,
                count,
                len: self.range.len(),
                range: self.range,
            });
        }
        Ok(())
    }
}

impl std::fmt::Display for Cycles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({} iterations", self.range, self.range.len())?;
        if let (Some(l), Some(space)) = (self.loader, self.key_space) {
            write!(f, ", loader {l} of a key space of {space}")?;
        }
        write!(
            f,
            "; wraps around within the range when a timed phase exhausts it)"
        )
    }
}

/// A range of iteration numbers, START inclusive, END exclusive, never empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CycleRange {
    /// The first iteration number.
    pub(crate) start: u64,
    /// One past the last.
    pub(crate) end: u64,
}

impl CycleRange {
    /// The range `start..end`, or why it is empty.
    pub(crate) fn new(start: u64, end: u64) -> Result<Self, CyclesError> {
        if end <= start {
            return Err(CyclesError::EmptyRange { start, end });
        }
        Ok(Self { start, end })
    }

    /// Parses `START..END` (each a count: `0`, `500k`, `1.5M`; END exclusive).
    pub(crate) fn parse(text: &str) -> Result<Self, CyclesError> {
        let (a, b) = text
            .split_once("..")
            .ok_or_else(|| CyclesError::RangeShape {
                text: text.to_owned(),
            })?;
        let bound = |t: &str| {
            units::count(t).map_err(|source| CyclesError::RangeBound {
                text: text.to_owned(),
                source,
            })
        };
        Self::new(bound(a)?, bound(b)?)
    }

    /// How many iteration numbers it holds.
    pub(crate) fn len(&self) -> u64 {
        self.end - self.start
    }

    /// The iteration number the phase's ordinal `ordinal` runs: `START + ordinal % len`
    /// (wrapping around within the range once it is exhausted).
    pub(crate) fn iteration(&self, ordinal: u64) -> u64 {
        self.start + ordinal % self.len().max(1)
    }
}

impl std::fmt::Display for CycleRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

/// Loader K of N (K counted from 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LoaderSlice {
    /// This loader, 1..=N.
    pub(crate) k: u64,
    /// How many loaders share the space.
    pub(crate) n: u64,
}

/// The variable a Kubernetes Indexed Job sets to each pod's completion index (from 0).
pub(crate) const JOB_INDEX_VAR: &str = "JOB_COMPLETION_INDEX";

impl LoaderSlice {
    /// Loader `k` of `n`, or why not (`n` = 0, `k` = 0 or `k` > `n`).
    pub(crate) fn new(k: u64, n: u64) -> Result<Self, CyclesError> {
        if n == 0 || k == 0 || k > n {
            return Err(CyclesError::LoaderOutOfRange { k, n });
        }
        Ok(Self { k, n })
    }

    /// Parses `K/N` (`1/2`: the first of two loaders), or `index/N`: K is the Kubernetes
    /// Indexed Job's completion index plus one (`JOB_COMPLETION_INDEX`, counted from 0), so
    /// that one manifest runs N loaders (bench/MANUAL.md).
    pub(crate) fn parse(text: &str) -> Result<Self, CyclesError> {
        Self::parse_with(text, |var| std::env::var(var).ok())
    }

    /// [`Self::parse`] with the environment given as a lookup (tests).
    pub(crate) fn parse_with(
        text: &str,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, CyclesError> {
        let shape = || CyclesError::LoaderShape {
            text: text.to_owned(),
        };
        let (k, n) = text.split_once('/').ok_or_else(shape)?;
        let n = n.trim().parse().map_err(|_| shape())?;
        let k = if k.trim() == "index" {
            let value = env(JOB_INDEX_VAR);
            let index: u64 = value
                .as_deref()
                .and_then(|v| v.trim().parse().ok())
                .ok_or_else(|| CyclesError::JobIndex {
                    found: value.map_or_else(|| "not set".to_owned(), |v| format!("`{v}`")),
                })?;
            index.saturating_add(1)
        } else {
            k.trim().parse().map_err(|_| shape())?
        };
        Self::new(k, n)
    }

    /// This loader's slice of the iteration numbers `0..space`: from `(K-1) * space / N` to
    /// `K * space / N` (the N slices cover the space exactly once).
    pub(crate) fn of(&self, space: u64) -> Result<CycleRange, CyclesError> {
        let at = |k: u64| (u128::from(k) * u128::from(space) / u128::from(self.n)) as u64;
        CycleRange::new(at(self.k - 1), at(self.k)).map_err(|_| CyclesError::EmptySlice {
            k: self.k,
            n: self.n,
            space,
        })
    }
}

impl std::fmt::Display for LoaderSlice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loader_takes_its_index_from_an_indexed_job() {
        let env = |value: Option<&'static str>| {
            move |var: &str| {
                assert_eq!(var, JOB_INDEX_VAR);
                value.map(str::to_owned)
            }
        };
        // Completion index 0 is loader 1; the last index is loader N.
        assert_eq!(
            LoaderSlice::parse_with("index/4", env(Some("0"))).unwrap(),
            LoaderSlice::new(1, 4).unwrap()
        );
        assert_eq!(
            LoaderSlice::parse_with("index/4", env(Some("3"))).unwrap(),
            LoaderSlice::new(4, 4).unwrap()
        );
        // An index past N is the usual range error; none or garbage names the variable.
        assert!(matches!(
            LoaderSlice::parse_with("index/4", env(Some("4"))),
            Err(CyclesError::LoaderOutOfRange { k: 5, n: 4 })
        ));
        let e = LoaderSlice::parse_with("index/4", env(None)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--loader index/N takes K from JOB_COMPLETION_INDEX (set by a Kubernetes Indexed \
             Job, counted from 0), which is not set"
        );
        let e = LoaderSlice::parse_with("index/4", env(Some("x"))).unwrap_err();
        assert!(e.to_string().ends_with("which is `x`"), "{e}");
        // K/N as before, without looking at the environment.
        assert_eq!(
            LoaderSlice::parse_with("2/3", |_| panic!("no lookup")).unwrap(),
            LoaderSlice::new(2, 3).unwrap()
        );
    }

    #[test]
    fn the_n_slices_cover_the_space_exactly_once_in_order() {
        for space in [1u64, 2, 3, 7, 10, 100, 1001, 99_999, u64::MAX] {
            for n in 1..=9u64 {
                if n > space {
                    continue;
                }
                let slices: Vec<CycleRange> = (1..=n)
                    .map(|k| LoaderSlice::new(k, n).unwrap().of(space).unwrap())
                    .collect();
                assert_eq!(slices[0].start, 0, "{space} {n}");
                assert_eq!(slices[slices.len() - 1].end, space, "{space} {n}");
                for w in slices.windows(2) {
                    assert_eq!(w[0].end, w[1].start, "no gap, no overlap: {space} {n}");
                }
                let total: u128 = slices.iter().map(|s| u128::from(s.len())).sum();
                assert_eq!(total, u128::from(space));
                let (min, max) = (
                    slices.iter().map(CycleRange::len).min().unwrap(),
                    slices.iter().map(CycleRange::len).max().unwrap(),
                );
                assert!(max - min <= 1, "equal slices: {space} {n}: {slices:?}");
            }
        }
        // Every number of a small space in exactly one slice.
        let mut owner = vec![0u32; 1001];
        for k in 1..=7 {
            let r = LoaderSlice::new(k, 7).unwrap().of(1001).unwrap();
            for i in r.start..r.end {
                owner[i as usize] += 1;
            }
        }
        assert!(owner.iter().all(|&n| n == 1));
    }

    #[test]
    fn loaders_and_ranges_parse_and_bad_ones_are_refused() {
        assert_eq!(LoaderSlice::parse("1/2"), Ok(LoaderSlice { k: 1, n: 2 }));
        assert_eq!(
            LoaderSlice::parse(" 3 / 3 "),
            Ok(LoaderSlice { k: 3, n: 3 })
        );
        for (bad, want) in [
            ("3/2", CyclesError::LoaderOutOfRange { k: 3, n: 2 }),
            ("0/2", CyclesError::LoaderOutOfRange { k: 0, n: 2 }),
            ("1/0", CyclesError::LoaderOutOfRange { k: 1, n: 0 }),
            ("1", CyclesError::LoaderShape { text: "1".into() }),
            ("a/b", CyclesError::LoaderShape { text: "a/b".into() }),
        ] {
            assert_eq!(LoaderSlice::parse(bad), Err(want), "{bad}");
        }
        assert_eq!(
            CycleRange::parse("0..500k"),
            Ok(CycleRange {
                start: 0,
                end: 500_000
            })
        );
        assert_eq!(CycleRange::parse("1M..2M").unwrap().len(), 1_000_000);
        assert_eq!(
            CycleRange::parse("10..10"),
            Err(CyclesError::EmptyRange { start: 10, end: 10 })
        );
        assert_eq!(
            CycleRange::parse("10..5"),
            Err(CyclesError::EmptyRange { start: 10, end: 5 })
        );
        assert!(matches!(
            CycleRange::parse("0-10"),
            Err(CyclesError::RangeShape { .. })
        ));
        assert!(matches!(
            CycleRange::parse("x..10"),
            Err(CyclesError::RangeBound { .. })
        ));
        assert_eq!(
            LoaderSlice::new(1, 3).unwrap().of(2),
            Err(CyclesError::EmptySlice {
                k: 1,
                n: 3,
                space: 2
            })
        );
    }

    #[test]
    fn the_range_comes_from_cycles_or_a_loader_slice_and_counts_must_fit() {
        let r = CycleRange::new(5, 15).unwrap();
        let c = Cycles::choose(Some(r), None, None, "w").unwrap().unwrap();
        assert_eq!(c.range, r);
        let l = LoaderSlice::new(2, 2).unwrap();
        let c = Cycles::choose(None, Some(l), Some(101), "w")
            .unwrap()
            .unwrap();
        assert_eq!(c.range, CycleRange::new(50, 101).unwrap());
        assert!(
            c.to_string().contains("loader 2/2 of a key space of 101"),
            "{c}"
        );
        assert_eq!(
            Cycles::choose(None, Some(l), None, "empty"),
            Err(CyclesError::NoKeySpace {
                workload: "empty".into()
            })
        );
        assert_eq!(Cycles::choose(None, None, Some(9), "w"), Ok(None));
        assert_eq!(c.check_count("-d", 51), Ok(()));
        assert!(matches!(
            c.check_count("-d", 52),
            Err(CyclesError::CountExceedsRange {
                count: 52,
                len: 51,
                ..
            })
        ));
    }

    #[test]
    fn ordinals_past_the_range_wrap_around_within_it() {
        let r = CycleRange::new(100, 103).unwrap();
        let got: Vec<u64> = (0..7).map(|o| r.iteration(o)).collect();
        assert_eq!(got, vec![100, 101, 102, 100, 101, 102, 100]);
    }
}
