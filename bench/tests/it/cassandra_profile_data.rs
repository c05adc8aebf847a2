//! The rows a cassandra-stress profile's insert writes follow the profile's `columnspec`, read
//! back from Cassandra. For each shipped profile (users.yaml and orders.yaml together, as one
//! workload): the keyspace dropped, `doppio schema --profile`, then the insert (`-P
//! ops_insert=1`, the shop's two inserts weighted as below; `-P population=SEQ(1..N)`) run
//! by every backend (doppio on both runtimes and scylla-rust-driver: every value is a pure
//! function of the iteration, so the three write the same rows and the table is what one of
//! them wrote); then the whole table is read by scylla-rust-driver and compared with the
//! spec.
//!
//! What an insert writes (bench/PROFILES.md, "How a profile becomes a workload"): with
//! population `SEQ(1..N)`, operation `j` writes partition `1 + j % N`, so `N * B` operations
//! visit every partition exactly `B` times; partition `p` has `n_d` values of clustering
//! column `d` (drawn from its `cluster`) under each value of the one before, so
//! `n_1 * ... * n_m` rows; a batch writes `select`'s mean times the mean row count
//! consecutive rows from a random first row, wrapping.
//!
//! - **classic** (`created` uniform(5..20) x `score` uniform(1..3) x `rank` fixed(2), `slot`
//!   and `id` the default fixed(1): 10 to 120 rows; a batch writes round(0.275 * 50) = 14
//!   rows). Only a fully written partition shows its cluster counts, so every partition is
//!   visited `B = 100` times: a row of a partition of `R > 14` rows is missed by all of them
//!   with probability `(1 - 14/R)^100` (3.9e-6 at `R = 120`), summed over the spec's row
//!   counts and 100 partitions 0.002 expected missed rows, so the partitions are read whole.
//!   Then each partition must be the full grid of the model (every `created` with the same
//!   scores, every (created, score) with both ranks, one slot and one id) and, across
//!   partitions, the count of `created` values, of scores and the rows per partition follow
//!   uniform(5..20), uniform(1..3) and their product times 2 (chi-square tests, the
//!   product's 34 values pooled into cells expecting 5 or more, and a Kolmogorov-Smirnov
//!   test of the product too: KS alone misses a product without its tails, such as the
//!   score count replaced by its mean 2, which gives D = 0.18 against a bound of 0.195 at 100
//!   partitions, where the pooled cells find rows outside its 20..=80). Scores are drawn from
//!   gaussian(1..1000) per digit, so two digits of a partition may draw the same score (about
//!   1 in 200 partitions): the rows then merge, which the spec implies too; the grid check
//!   counts distinct scores, and the chi-square test tolerates that one cell moving by one.
//! - **timeseries** (`at` fixed(1000), population seq(1..1000): a partition's row `r` is
//!   `at = r + 1`; a batch writes 50 consecutive rows). Full coverage would need about 300
//!   visits per partition (150,000 rows per partition and backend), so the test compares
//!   what `B = 30` visits determine: every `at` is in 1..=1000 and all 1000 appear across
//!   the partitions (fewer rows per partition would leave the top ones out); in a partition
//!   the rows form circular runs of consecutive `at` of 50 or more (50 consecutive rows per
//!   batch, wrapping at 1000), at most 50 * B rows; and the total rows written match the
//!   exact mean and variance of the rows covered by `B` arcs of 50 from uniform starts on a
//!   circle of 1000 (a z-test over the 30 independent partitions: starts that were not
//!   uniform, or batches of another length, move it by far more than the threshold).
//! - **shop** (users.yaml and orders.yaml run together: one population, `-P
//!   ops_users_insert=1 -P ops_orders_insert=19`). Iteration `i` runs the insert that
//!   `Workload::pick(i)` draws by weight (a pure function of `i`) on partition `1 + i % N` of
//!   its table (an orders batch's rows all take `i` as their operation), so the test counts
//!   from the converted workload how many times each insert writes each partition (every
//!   backend runs the same iterations), and the report's request counts must agree. orders
//!   needs the operations (users need one visit per partition), hence 19 in 20 for it.
//!   - **orders** (`placed` cluster exp(1..200), `order_id` the default fixed(1); a batch
//!     writes the `repeat` of `orders.insert`, 8 consecutive rows). Only fully written
//!     partitions show their row counts: `N = 50` partitions, 340 iterations each, give each
//!     partition 315 to 333 batches; a row of a partition of `R > 8` rows is missed by all of
//!     them with probability `(1 - 8/R)^v`, which summed over the spec's row counts and the
//!     partitions' actual visits is 1.6e-3 expected missed rows (computed, and required
//!     under 0.01; three times the visits read back the same 3312 rows). Then the rows per
//!     customer against exp(1..200) (chi-square, pooled, and KS), one `order_id` per
//!     partition; per row, `items` map sizes against uniform(1..10) and `tags` frozen list
//!     sizes against uniform(0..2) (chi-square; an empty frozen list is a value: it reads
//!     back as an empty list, never null, which is checked), `status` at most 4 distinct
//!     values (population uniform(1..4)) of 8 characters (size fixed(8)) whose counts are
//!     uniform (chi-square of the values numbered in any order), `total` against
//!     gaussian(1..100k) as its value (KS). The 50 partitions' tests catch another shape,
//!     not a nearby range: the rows' chi-square rejects uniform(1..200) but passes
//!     exp(1..250).
//!   - **users** (one row per partition: the 50 user ids drawn from uniform(1..1M) differ):
//!     `name` lengths against gaussian(5..30) (KS), `emails` set sizes against uniform(1..3)
//!     and `prefs` map sizes against uniform(0..8) (chi-square; an empty map reads back as
//!     null), `joined` present. `logins` is appended to (`logins = logins + ?`), fixed(2)
//!     timestamps a write, by every write of the row: its length is exactly 2 x 3 backends x
//!     the iterations that picked `users.insert` for its partition (7 to 25 per backend);
//!     the lengths, sorted, must equal those expected, sorted (rows are not mapped to
//!     partitions).
//!
//! Sizes and values: classic `owner` text lengths (one per partition) against uniform(4..12)
//! (chi-square), `payload` blob lengths (one per row) against extreme(16..256,1.5) (KS),
//! `slot` (one per partition) against ~exp(1..100) (KS), scores against gaussian(1..1000)
//! (KS); timeseries `tags` set sizes against uniform(0..3) (chi-square, an empty set reads
//! back as null), `value` against gaussian(1..1M,4) and `quality` against ~exp(0..100) (KS);
//! timeseries `day` seq(1..30): the 30 partitions have days 1..30, each once. The expected
//! distribution functions are computed from the parameters `workload::dist::Distribution`
//! parses out of the spec text written here (the YAML's, copied: a converter that ignored a
//! key must not set the expectation too), with statrs's continuous CDFs: a generator's
//! sample is the continuous draw truncated toward zero, offset from `min`, clamped onto the
//! range, mirrored when inverted (PROFILES.md, "Distributions").
//!
//! Every test is at significance ALPHA = 0.001: chi-square against its quantile at 1 -
//! ALPHA (a value outside the distribution's range fails at once); KS against the asymptotic
//! Kolmogorov bound `sqrt(ln(2 / ALPHA) / 2) / sqrt(n)`, conservative for discrete
//! distributions; the z-test against 3.29. The data is a pure
//! function of the iterations, so a test that passes once always passes.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Instant;

use doppio_bench::workload::dist::{DistShape, Distribution};
use doppio_bench::workload::Workload;
use futures_util::StreamExt;
use scylla::deserialize::row::DeserializeRow;
use scylla::value::{CqlTimestamp, CqlTimeuuid, CqlValue};
use statrs::distribution::{ChiSquared, ContinuousCDF, Exp, Normal, Weibull};

use crate::support;
use support::{doppio, drop_keyspace, json, scratch_dir, CountedRun, ALL_DRIVERS};

const NODE: &str = "127.0.0.1:9042";
const DRIVERS: [&str; 3] = ["doppio", "doppio-uring", "scylla"];
/// The significance of every statistical test.
const ALPHA: f64 = 1e-3;

fn dist(spec: &str) -> Distribution {
    Distribution::parse(spec).unwrap()
}

/// The path `--profile` takes for the shipped profiles `files` (comma-separated when several).
fn profile_path(files: &[&str]) -> String {
    let dir = env!("CARGO_MANIFEST_DIR");
    let paths: Vec<String> = files
        .iter()
        .map(|f| format!("{dir}/profiles/{f}"))
        .collect();
    paths.join(",")
}

/// `doppio schema --profile` on an empty keyspace, then the inserts of the profiles `files`
/// (run together) over `partitions` partitions (`SEQ(1..partitions)`), `partitions * visits`
/// operations by every backend, the operations' weights set by `weights` (`ops_NAME=W`); the
/// run's report.
fn fill(
    files: &[&str],
    keyspace: &str,
    partitions: u64,
    visits: u64,
    weights: &[&str],
) -> serde_json::Value {
    let path = profile_path(files);
    let what = files.join(",");
    let dir = scratch_dir(keyspace);
    drop_keyspace(NODE, &dir, keyspace);
    let population = format!("population=SEQ(1..{partitions})");
    let mut p = vec!["-P", population.as_str()];
    for w in weights {
        p.extend(["-P", w]);
    }
    let out = doppio(&[&["schema", NODE, "--profile", &path][..], &p].concat());
    assert!(out.status.success(), "schema of {what}");
    let ops = partitions * visits;
    let report = dir.join("insert.json");
    let started = Instant::now();
    let out = CountedRun::new(NODE, ALL_DRIVERS, ops, 16, &report)
        .args(&["--profile", &path])
        .args(&p)
        .run();
    assert!(out.status.success(), "insert of {what}");
    let j = json(&report);
    assert!(j["fatal_error"].is_null(), "{what}: {}", j["fatal_error"]);
    for d in DRIVERS {
        let b = &j["backends"][d];
        assert_eq!(b["requests"], ops, "{what}: {d} ran every batch");
        assert_eq!(b["errors"], 0, "{what}: {d}: {}", b["errors_by_kind"]);
    }
    eprintln!(
        "{what}: {ops} operations per backend written in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    j
}

/// Every row of `cql`, read by scylla-rust-driver (paged).
fn select<R>(cql: &str) -> Vec<R>
where
    R: for<'f, 'm> DeserializeRow<'f, 'm> + 'static,
{
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let session = scylla::client::session_builder::SessionBuilder::new()
            .known_node(NODE)
            .build()
            .await
            .unwrap();
        let mut stmt = scylla::statement::unprepared::Statement::new(cql);
        stmt.set_page_size(5000);
        let mut rows = session
            .query_iter(stmt, &[])
            .await
            .unwrap()
            .rows_stream::<R>()
            .unwrap();
        let mut out = Vec::new();
        while let Some(row) = rows.next().await {
            out.push(row.unwrap());
        }
        out
    })
}

/// P(X <= v) for the values `d` gives, from its parsed shape and parameters: a continuous
/// draw truncated toward zero, offset from `min`, clamped onto [min, max], mirrored when
/// inverted (bench/PROFILES.md, "Distributions").
fn cdf(d: &Distribution, v: i64) -> f64 {
    if v < d.min {
        return 0.0;
    }
    if v >= d.max {
        return 1.0;
    }
    // P(offset <= k), for k < max - min.
    let offset_at_most = |k: i64| -> f64 {
        if k < 0 {
            return 0.0;
        }
        // trunc(x) <= k + min: x < k + min + 1 when that is positive, else x <= k + min.
        let edge = k + d.min;
        let t = (if edge >= 0 { edge + 1 } else { edge }) as f64;
        match &d.shape {
            DistShape::Uniform => (k + 1) as f64 / (d.max - d.min + 1) as f64,
            DistShape::Exp { mean } => Exp::new(1.0 / mean).unwrap().cdf((k + 1) as f64),
            DistShape::Extreme { shape, scale } => {
                Weibull::new(*shape, *scale).unwrap().cdf((k + 1) as f64)
            }
            DistShape::Gaussian { mean, stdev } => Normal::new(*mean, *stdev).unwrap().cdf(t),
            other => panic!("the test has no distribution function for {other:?}"),
        }
    };
    if d.inverted {
        1.0 - offset_at_most(d.max - v - 1)
    } else {
        offset_at_most(v - d.min)
    }
}

/// The probability of each value of `d` (a small range).
fn pmf(d: &Distribution) -> BTreeMap<i64, f64> {
    (d.min..=d.max)
        .map(|v| (v, cdf(d, v) - cdf(d, v - 1)))
        .filter(|&(_, p)| p > 0.0)
        .collect()
}

/// The distribution of the product of independent draws of `specs`.
fn product(specs: &[&str]) -> BTreeMap<i64, f64> {
    let mut out = BTreeMap::from([(1, 1.0)]);
    for spec in specs {
        let mut next = BTreeMap::new();
        for (a, p) in &out {
            for (b, q) in pmf(&dist(spec)) {
                *next.entry(a * b).or_insert(0.0) += p * q;
            }
        }
        out = next;
    }
    out
}

/// Pearson's chi-square test of `observed` against the probabilities `pmf`: consecutive
/// values are pooled into cells until each expects 5 or more (a remainder joins the last
/// cell), so that a wide distribution is tested by ranges, its tails included.
fn chi_square(what: &str, observed: &[i64], pmf: &BTreeMap<i64, f64>) {
    let n = observed.len() as f64;
    let outside: BTreeSet<&i64> = observed.iter().filter(|v| !pmf.contains_key(v)).collect();
    assert!(
        outside.is_empty(),
        "{what}: observed values {outside:?} outside the expected {:?}..={:?}",
        pmf.keys().next(),
        pmf.keys().last()
    );
    // Cells (first value, last value, probability).
    let mut cells: Vec<(i64, i64, f64)> = Vec::new();
    let mut open: Option<(i64, i64, f64)> = None;
    for (&v, &p) in pmf {
        let (lo, _, q) = open.unwrap_or((v, v, 0.0));
        let cell = (lo, v, q + p);
        if n * cell.2 >= 5.0 {
            cells.push(cell);
            open = None;
        } else {
            open = Some(cell);
        }
    }
    if let Some((_, hi, q)) = open {
        let last = cells
            .last_mut()
            .expect("a cell expecting 5 or more: too few samples");
        (last.1, last.2) = (hi, last.2 + q);
    }
    assert!(
        cells.len() >= 2,
        "{what}: one cell: too few samples to test"
    );
    let mut stat = 0.0;
    let (mut expected, mut counts) = (BTreeMap::new(), BTreeMap::new());
    for &(lo, hi, p) in &cells {
        let e = n * p;
        let o = observed.iter().filter(|&&v| lo <= v && v <= hi).count() as f64;
        stat += (o - e) * (o - e) / e;
        let key = if lo == hi {
            format!("{lo}")
        } else {
            format!("{lo}..={hi}")
        };
        expected.insert((lo, key.clone()), (e * 10.0).round() / 10.0);
        counts.insert((lo, key), o as u64);
    }
    let expected: Vec<(String, f64)> = expected.into_iter().map(|((_, k), e)| (k, e)).collect();
    let counts: Vec<(String, u64)> = counts.into_iter().map(|((_, k), o)| (k, o)).collect();
    let df = (cells.len() - 1) as f64;
    let crit = ChiSquared::new(df).unwrap().inverse_cdf(1.0 - ALPHA);
    eprintln!("{what}: n {n}, chi-square {stat:.2} (df {df}, bound {crit:.2}), {counts:?}");
    assert!(
        stat <= crit,
        "{what}: chi-square {stat:.2} above {crit:.2} (df {df}, significance {ALPHA}): \
         expected counts {expected:?}, observed {counts:?}"
    );
}

/// The one-sample Kolmogorov-Smirnov test of `samples` against `cdf` (integers).
fn ks(what: &str, mut samples: Vec<i64>, cdf: impl Fn(i64) -> f64) {
    samples.sort_unstable();
    let n = samples.len() as f64;
    assert!(n > 0.0, "{what}: no samples");
    // Both functions step at integers only: the largest gap is at a sample value v (F_n(v))
    // or just below it (F_n(v - 1), the share below v).
    let (mut d, mut at, mut obs, mut exp) = (0.0f64, 0, 0.0, 0.0);
    let mut k = 0;
    while k < samples.len() {
        let v = samples[k];
        let j = k + samples[k..].partition_point(|&x| x == v);
        for (x, fx) in [(v - 1, k as f64 / n), (v, j as f64 / n)] {
            let gap = (fx - cdf(x)).abs();
            if gap > d {
                (d, at, obs, exp) = (gap, x, fx, cdf(x));
            }
        }
        k = j;
    }
    let crit = ((2.0 / ALPHA).ln() / 2.0).sqrt() / n.sqrt();
    let mean = samples.iter().map(|&x| x as f64).sum::<f64>() / n;
    let (lo, hi) = (samples[0], samples[samples.len() - 1]);
    eprintln!(
        "{what}: n {n}, KS D {d:.4} (bound {crit:.4}) at {at}, mean {mean:.2}, range {lo}..={hi}"
    );
    assert!(
        d <= crit,
        "{what}: Kolmogorov-Smirnov D = {d:.4} above {crit:.4} (n {n}, significance {ALPHA}): \
         P(X <= {at}) expected {exp:.4}, observed {obs:.4}; observed mean {mean:.2}, range \
         {lo}..={hi}"
    );
}

/// The test of a spec's values: `samples` against the distribution `spec`.
fn ks_spec(what: &str, samples: Vec<i64>, spec: &str) {
    let d = dist(spec);
    ks(&format!("{what} ({spec})"), samples, |v| cdf(&d, v));
}

/// The classic profile's clustering columns' `cluster` specs, in key order (slot and id
/// take the default FIXED(1)).
const CLASSIC_CLUSTER: [&str; 3] = ["uniform(5..20)", "uniform(1..3)", "fixed(2)"];
const CLASSIC_PARTITIONS: u64 = 100;
const CLASSIC_VISITS: u64 = 100;

/// One classic partition as read: created -> score (its bits) -> ranks.
#[derive(Default)]
struct Classic {
    grid: BTreeMap<i64, BTreeMap<u64, BTreeSet<i64>>>,
    rows: usize,
    slots: BTreeSet<i32>,
    ids: BTreeSet<String>,
}

#[test]
fn the_classic_profile_writes_what_its_columnspec_says() {
    let _turn = doppio_test_support::file_turn(module_path!());
    if doppio_test_support::CASSANDRA.answering().is_none() {
        return;
    }
    let started = Instant::now();
    fill(
        &["classic.yaml"],
        "doppio_profile_classic",
        CLASSIC_PARTITIONS,
        CLASSIC_VISITS,
        &["ops_insert=1"],
    );
    type Row = (
        String,
        bool,
        CqlTimestamp,
        f64,
        i64,
        i32,
        CqlTimeuuid,
        Option<Vec<u8>>,
    );
    let rows: Vec<Row> = select(
        "SELECT owner, active, created, score, rank, slot, id, payload \
         FROM doppio_profile_classic.mixedtypes",
    );
    let mut parts: HashMap<(String, bool), Classic> = HashMap::new();
    let mut payloads = Vec::new();
    for (owner, active, created, score, rank, slot, id, payload) in rows {
        let part = parts.entry((owner, active)).or_default();
        part.grid
            .entry(created.0)
            .or_default()
            .entry(score.to_bits())
            .or_default()
            .insert(rank);
        part.rows += 1;
        part.slots.insert(slot);
        part.ids.insert(id.to_string());
        payloads.push(payload.map_or(0, |p| p.len() as i64));
    }

    // Population SEQ(1..100): every partition written, and only those.
    assert_eq!(
        parts.len() as u64,
        CLASSIC_PARTITIONS,
        "partitions (owner, active): expected the {CLASSIC_PARTITIONS} of SEQ(1..{CLASSIC_PARTITIONS})"
    );
    let owners: BTreeSet<&String> = parts.keys().map(|(o, _)| o).collect();
    assert!(owners.len() <= 50_000, "owner population uniform(1..50k)");

    // Each partition is the full grid of its cluster counts.
    let (mut n_created, mut n_score, mut n_rows) = (Vec::new(), Vec::new(), Vec::new());
    for ((owner, active), part) in &parts {
        let scores: BTreeSet<u64> = part.grid.values().flat_map(|s| s.keys().copied()).collect();
        let ranks: BTreeSet<i64> = part
            .grid
            .values()
            .flat_map(|s| s.values().flatten().copied())
            .collect();
        for (created, under) in &part.grid {
            let here: BTreeSet<u64> = under.keys().copied().collect();
            assert_eq!(
                here, scores,
                "partition ({owner}, {active}): created {created} has scores {here:?}, \
                 expected the partition's {scores:?} (one score count per partition)"
            );
            for (score, r) in under {
                assert_eq!(
                    r,
                    &ranks,
                    "partition ({owner}, {active}): created {created}, score {}: ranks {r:?}, \
                     expected all of {ranks:?}",
                    f64::from_bits(*score)
                );
            }
        }
        assert_eq!(
            ranks.len(),
            2,
            "partition ({owner}, {active}): rank cluster fixed(2), observed ranks {ranks:?}"
        );
        assert_eq!(
            (part.slots.len(), part.ids.len()),
            (1, 1),
            "partition ({owner}, {active}): slot and id cluster FIXED(1) (the default), \
             observed {} slots and {} ids",
            part.slots.len(),
            part.ids.len()
        );
        let grid = part.grid.len() * scores.len() * ranks.len();
        assert_eq!(
            part.rows, grid,
            "partition ({owner}, {active}): rows = created x scores x ranks = {grid}"
        );
        n_created.push(part.grid.len() as i64);
        n_score.push(scores.len() as i64);
        n_rows.push(part.rows as i64);
    }
    chi_square(
        "classic: created values per partition (cluster uniform(5..20))",
        &n_created,
        &pmf(&dist(CLASSIC_CLUSTER[0])),
    );
    chi_square(
        "classic: scores per created (cluster uniform(1..3))",
        &n_score,
        &pmf(&dist(CLASSIC_CLUSTER[1])),
    );
    let rows_pmf = product(&CLASSIC_CLUSTER);
    let rows_cdf = |v: i64| rows_pmf.range(..=v).map(|(_, p)| p).sum::<f64>();
    let mean_rows: f64 = rows_pmf.iter().map(|(v, p)| *v as f64 * p).sum();
    eprintln!("classic: rows per partition expected mean {mean_rows:.2}");
    chi_square(
        "classic: rows per partition (uniform(5..20) x uniform(1..3) x fixed(2))",
        &n_rows,
        &rows_pmf,
    );
    ks(
        "classic: rows per partition (uniform(5..20) x uniform(1..3) x fixed(2))",
        n_rows,
        rows_cdf,
    );

    // Sizes and values.
    let owner_lengths: Vec<i64> = owners.iter().map(|o| o.chars().count() as i64).collect();
    chi_square(
        "classic: owner lengths (size uniform(4..12))",
        &owner_lengths,
        &pmf(&dist("uniform(4..12)")),
    );
    ks_spec("classic: payload lengths", payloads, "extreme(16..256,1.5)");
    let slots: Vec<i64> = parts
        .values()
        .flat_map(|p| p.slots.iter().map(|&s| i64::from(s)))
        .collect();
    ks_spec("classic: slot, one per partition", slots, "~exp(1..100)");
    let scores: Vec<i64> = parts
        .values()
        .flat_map(|p| {
            let s: BTreeSet<u64> = p.grid.values().flat_map(|s| s.keys().copied()).collect();
            s.into_iter().map(|b| f64::from_bits(b) as i64)
        })
        .collect();
    ks_spec(
        "classic: scores, distinct per partition",
        scores,
        "gaussian(1..1000)",
    );
    eprintln!("classic: done in {:.1} s", started.elapsed().as_secs_f64());
}

const TS_PARTITIONS: u64 = 30;
const TS_VISITS: u64 = 30;
/// Rows per partition (cluster fixed(1000)) and per batch (select fixed(50)/1000).
const TS_ROWS: i64 = 1000;
const TS_BATCH: i64 = 50;

/// The mean and variance of the rows covered by `b` arcs of `l` consecutive rows, each from
/// a uniform start, on a circle of `r` rows: a row is missed with probability
/// `(1 - l/r)^b`; two rows at circular distance `d` are both missed with probability
/// `(1 - (l + min(d, l))/r)^b`.
fn coverage(r: i64, l: i64, b: u64) -> (f64, f64) {
    let miss = |starts: i64| (1.0 - starts as f64 / r as f64).powi(b as i32);
    let q = miss(l);
    let both: f64 = (0..r).map(|d| miss(l + d.min(r - d).min(l))).sum::<f64>() * r as f64;
    let mean_missed = r as f64 * q;
    (r as f64 - mean_missed, both - mean_missed * mean_missed)
}

#[test]
fn the_timeseries_profile_writes_what_its_columnspec_says() {
    let _turn = doppio_test_support::file_turn(module_path!());
    if doppio_test_support::CASSANDRA.answering().is_none() {
        return;
    }
    let started = Instant::now();
    fill(
        &["timeseries.yaml"],
        "doppio_profile_ts",
        TS_PARTITIONS,
        TS_VISITS,
        &["ops_insert=1"],
    );
    type Row = (CqlValue, i32, CqlTimestamp, f64, i16, Option<Vec<String>>);
    let rows: Vec<Row> =
        select("SELECT sensor, day, at, value, quality, tags FROM doppio_profile_ts.readings");
    let mut parts: HashMap<(String, i32), BTreeSet<i64>> = HashMap::new();
    let (mut values, mut qualities, mut tags) = (Vec::new(), Vec::new(), Vec::new());
    for (sensor, day, at, value, quality, t) in rows {
        parts
            .entry((format!("{sensor:?}"), day))
            .or_default()
            .insert(at.0);
        values.push(value as i64);
        qualities.push(i64::from(quality));
        tags.push(t.map_or(0, |t| t.len() as i64));
    }

    // Population SEQ(1..30): 30 partitions, days seq(1..30) one each.
    assert_eq!(
        parts.len() as u64,
        TS_PARTITIONS,
        "partitions (sensor, day): expected the {TS_PARTITIONS} of SEQ(1..{TS_PARTITIONS})"
    );
    let mut days: Vec<i32> = parts.keys().map(|(_, d)| *d).collect();
    days.sort_unstable();
    assert_eq!(
        days,
        (1..=30).collect::<Vec<i32>>(),
        "day population seq(1..30): one partition per day"
    );

    // `at`: 1..=1000, all of them across partitions; in each partition circular runs of 50
    // consecutive rows or more.
    let all: BTreeSet<i64> = parts.values().flatten().copied().collect();
    assert!(
        all.iter().all(|at| (1..=TS_ROWS).contains(at)) && all.len() as i64 == TS_ROWS,
        "at: cluster fixed(1000), population seq(1..1000): expected every value of 1..=1000 \
         across partitions, observed {} values in {:?}..={:?}",
        all.len(),
        all.first(),
        all.last()
    );
    let mut covered = 0;
    for ((sensor, day), ats) in &parts {
        let n = ats.len() as i64;
        assert!(
            n <= TS_BATCH * TS_VISITS as i64,
            "partition ({sensor}, {day}): {n} rows from {TS_VISITS} batches of {TS_BATCH}"
        );
        covered += n;
        if n == TS_ROWS {
            continue;
        }
        // Runs of consecutive values, the one ending at 1000 joined to the one at 1.
        let mut runs: Vec<i64> = Vec::new();
        let mut prev = None;
        for &at in ats {
            match (prev, runs.last_mut()) {
                (Some(p), Some(len)) if at == p + 1 => *len += 1,
                _ => runs.push(1),
            }
            prev = Some(at);
        }
        if ats.contains(&1) && ats.contains(&TS_ROWS) && runs.len() > 1 {
            let last = runs.pop().unwrap();
            runs[0] += last;
        }
        assert!(
            runs.iter().all(|&len| len >= TS_BATCH),
            "partition ({sensor}, {day}): runs of consecutive `at` {runs:?}, expected each \
             of {TS_BATCH} rows or more (select fixed(50)/1000: 50 consecutive rows a batch)"
        );
    }
    let (mean, var) = coverage(TS_ROWS, TS_BATCH, TS_VISITS);
    let expected = mean * TS_PARTITIONS as f64;
    let sd = (var * TS_PARTITIONS as f64).sqrt();
    let z = (covered as f64 - expected) / sd;
    let bound = Normal::new(0.0, 1.0)
        .unwrap()
        .inverse_cdf(1.0 - ALPHA / 2.0);
    eprintln!(
        "timeseries: {covered} rows written, expected {expected:.1} (sd {sd:.1}) from \
         {TS_VISITS} batches of {TS_BATCH} per partition of {TS_ROWS}: z {z:.2} (bound {bound:.2})"
    );
    assert!(
        z.abs() <= bound,
        "timeseries: {covered} rows in {TS_PARTITIONS} partitions, expected {expected:.1} \
         (sd {sd:.1}) for {TS_VISITS} batches of {TS_BATCH} consecutive rows from uniform \
         starts in partitions of {TS_ROWS}: z = {z:.2}, beyond {bound:.2}"
    );

    // Sizes and values, one per row.
    chi_square(
        "timeseries: tags set sizes (size uniform(0..3), empty read as null)",
        &tags,
        &pmf(&dist("uniform(0..3)")),
    );
    ks_spec("timeseries: value", values, "gaussian(1..1M,4)");
    ks_spec("timeseries: quality", qualities, "~exp(0..100)");
    eprintln!(
        "timeseries: done in {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// The shop: users.yaml and orders.yaml, run together.
const SHOP: [&str; 2] = ["users.yaml", "orders.yaml"];
const SHOP_PARTITIONS: u64 = 50;
const SHOP_VISITS: u64 = 340;
/// users.insert one operation in 20, orders.insert the rest.
const SHOP_WEIGHTS: [&str; 2] = ["ops_users_insert=1", "ops_orders_insert=19"];
/// users.yaml: `logins` (appended to by each write); orders.yaml: `placed`'s `cluster`.
const LOGINS_SIZE: &str = "fixed(2)";
const ORDERS_CLUSTER: &str = "exp(1..200)";

#[test]
fn the_shop_profiles_write_what_their_columnspecs_say() {
    let _turn = doppio_test_support::file_turn(module_path!());
    if doppio_test_support::CASSANDRA.answering().is_none() {
        return;
    }
    let started = Instant::now();
    let n = SHOP_PARTITIONS as usize;
    let ops = SHOP_PARTITIONS * SHOP_VISITS;

    // What each iteration runs (a pure function of it and the weights), hence how many times
    // each partition is written by each insert, and the rows per orders batch.
    let mut overrides = vec![(
        "population".to_owned(),
        format!("SEQ(1..{SHOP_PARTITIONS})"),
    )];
    for w in SHOP_WEIGHTS {
        let (k, v) = w.split_once('=').unwrap();
        overrides.push((k.to_owned(), v.to_owned()));
    }
    let w = Workload::from_profile(&profile_path(&SHOP), &overrides).unwrap();
    let group = |name: &str| w.groups.iter().position(|g| g.name == name).unwrap();
    let (users_insert, orders_insert) = (group("users.insert"), group("orders.insert"));
    // The converter sizes the batch by exp(1..200)'s clamped mean, 70.4 rows: a tenth of
    // it, 7 (`workload::dist::tests::the_mean_is_the_samples_mean`). The coverage below
    // takes the batch it runs.
    let batch = i64::from(w.groups[orders_insert].repeat);
    let (mut user_writes, mut order_visits) = (vec![0u64; n], vec![0u64; n]);
    for i in 0..ops {
        let p = (i % SHOP_PARTITIONS) as usize;
        match w.pick(i) {
            g if g == users_insert => user_writes[p] += 1,
            g if g == orders_insert => order_visits[p] += 1,
            g => panic!("iteration {i} runs {}, not an insert", w.groups[g].name),
        }
    }
    // A row of a partition of `r > batch` rows is missed by all of its `v` batches with
    // probability `(1 - batch/r)^v`.
    let rows_pmf = pmf(&dist(ORDERS_CLUSTER));
    let missed: f64 = order_visits
        .iter()
        .map(|&v| {
            rows_pmf
                .range(batch + 1..)
                .map(|(&r, &p)| p * r as f64 * (1.0 - batch as f64 / r as f64).powi(v as i32))
                .sum::<f64>()
        })
        .sum();
    eprintln!(
        "shop: users written {}..={} times per partition, orders {}..={} batches of {batch} \
         rows per partition: {missed:.2e} rows expected missed",
        user_writes.iter().min().unwrap(),
        user_writes.iter().max().unwrap(),
        order_visits.iter().min().unwrap(),
        order_visits.iter().max().unwrap(),
    );
    assert!(
        missed < 0.01,
        "orders: {missed:.3} rows of {ORDERS_CLUSTER} partitions expected missed by batches of \
         {batch} rows visiting them {}..={} times, expected under 0.01: more visits",
        order_visits.iter().min().unwrap(),
        order_visits.iter().max().unwrap()
    );

    let j = fill(
        &SHOP,
        "doppio_profile_shop",
        SHOP_PARTITIONS,
        SHOP_VISITS,
        &SHOP_WEIGHTS,
    );
    for d in DRIVERS {
        let statements = j["backends"][d]["statements"].as_array().unwrap();
        for (name, n) in [
            ("users.insert", user_writes.iter().sum::<u64>()),
            ("orders.insert", order_visits.iter().sum::<u64>()),
        ] {
            let s = statements.iter().find(|s| s["name"] == name).unwrap();
            assert_eq!(
                s["requests"], n,
                "{d}: {name} ran {} times, expected {n} (the iterations that pick it)",
                s["requests"]
            );
        }
    }

    // users: one row per partition.
    type UserRow = (
        CqlValue,
        Option<String>,
        Option<Vec<String>>,
        Option<BTreeMap<String, i32>>,
        Option<Vec<CqlTimestamp>>,
        Option<CqlValue>,
    );
    let users: Vec<UserRow> = select(
        "SELECT user_id, name, emails, prefs, logins, joined FROM doppio_profile_shop.users",
    );
    assert_eq!(
        users.len(),
        n,
        "users: expected one row per partition of SEQ(1..{SHOP_PARTITIONS}), observed {}",
        users.len()
    );
    let (mut names, mut emails, mut prefs, mut logins) = (vec![], vec![], vec![], vec![]);
    for (user_id, name, e, p, l, joined) in users {
        let name = name.unwrap_or_else(|| panic!("users {user_id:?}: name null, expected set"));
        assert!(
            joined.is_some(),
            "users {user_id:?}: joined null, expected a date"
        );
        names.push(name.chars().count() as i64);
        emails.push(e.map_or(0, |e| e.len() as i64));
        prefs.push(p.map_or(0, |p| p.len() as i64));
        logins.push(l.map_or(0, |l| l.len() as i64));
    }
    ks_spec("users: name lengths", names, "gaussian(5..30)");
    chi_square(
        "users: emails set sizes (size uniform(1..3))",
        &emails,
        &pmf(&dist("uniform(1..3)")),
    );
    chi_square(
        "users: prefs map sizes (size uniform(0..8), empty read as null)",
        &prefs,
        &pmf(&dist("uniform(0..8)")),
    );
    // Each write appends `size` elements: every backend wrote every partition as many times
    // as its iterations picked users.insert.
    let per_write = dist(LOGINS_SIZE).max;
    let mut expected: Vec<i64> = user_writes
        .iter()
        .map(|&k| per_write * (k * DRIVERS.len() as u64) as i64)
        .collect();
    expected.sort_unstable();
    logins.sort_unstable();
    eprintln!(
        "users: logins lengths {}..={}, expected {}..={}",
        logins[0],
        logins[n - 1],
        expected[0],
        expected[n - 1]
    );
    assert_eq!(
        logins, expected,
        "users: logins list lengths (sorted), expected {per_write} ({LOGINS_SIZE}) per write \
         times each partition's writes (3 backends x the iterations that picked users.insert)"
    );

    // orders: a partition per customer, a row per `placed`.
    type OrderRow = (
        CqlValue,
        CqlTimestamp,
        CqlTimeuuid,
        Option<BTreeMap<String, i32>>,
        Option<f64>,
        Option<String>,
        Option<Vec<String>>,
    );
    let orders: Vec<OrderRow> = select(
        "SELECT customer, placed, order_id, items, total, status, tags \
         FROM doppio_profile_shop.orders",
    );
    let mut parts: HashMap<String, (BTreeSet<i64>, BTreeSet<String>)> = HashMap::new();
    let (mut items, mut totals, mut tags) = (vec![], vec![], vec![]);
    let (mut statuses, mut null_tags) = (BTreeMap::<String, i64>::new(), 0);
    for (customer, placed, order_id, i, total, status, t) in orders {
        let part = parts.entry(format!("{customer:?}")).or_default();
        part.0.insert(placed.0);
        part.1.insert(order_id.to_string());
        items.push(i.map_or(0, |i| i.len() as i64));
        totals.push(total.expect("orders: total null, expected set") as i64);
        *statuses
            .entry(status.expect("orders: status null, expected set"))
            .or_default() += 1;
        null_tags += i64::from(t.is_none());
        tags.push(t.map_or(0, |t| t.len() as i64));
    }
    assert_eq!(
        parts.len(),
        n,
        "orders: expected the {n} customer partitions of SEQ(1..{SHOP_PARTITIONS}), observed {}",
        parts.len()
    );
    let mut rows = Vec::new();
    for (customer, (placed, ids)) in &parts {
        assert_eq!(
            ids.len(),
            1,
            "orders partition {customer}: order_id cluster FIXED(1) (the default): expected \
             one order_id, observed {}",
            ids.len()
        );
        rows.push(placed.len() as i64);
    }
    let what = format!("orders: rows per customer (placed cluster {ORDERS_CLUSTER})");
    chi_square(&what, &rows, &rows_pmf);
    let rows_cdf = |v: i64| rows_pmf.range(..=v).map(|(_, p)| p).sum::<f64>();
    ks(&what, rows, rows_cdf);
    chi_square(
        "orders: items map sizes (size uniform(1..10))",
        &items,
        &pmf(&dist("uniform(1..10)")),
    );
    eprintln!("orders: {null_tags} tags null of {}", tags.len());
    assert_eq!(
        null_tags, 0,
        "orders: tags frozen lists read back null, expected every one present (an empty frozen \
         list is a value)"
    );
    chi_square(
        "orders: tags frozen list sizes (size uniform(0..2))",
        &tags,
        &pmf(&dist("uniform(0..2)")),
    );
    eprintln!("orders: statuses {statuses:?}");
    let status_pop = dist("uniform(1..4)");
    assert!(
        statuses.len() as i64 <= status_pop.max,
        "orders: status population uniform(1..4): expected 4 distinct values at most, observed \
         {}",
        statuses.len()
    );
    for s in statuses.keys() {
        assert_eq!(
            s.chars().count(),
            8,
            "orders: status {s:?}: size fixed(8), observed {} characters",
            s.chars().count()
        );
    }
    // The values numbered in any order: each identity is drawn with probability 1/4.
    let numbered: Vec<i64> = statuses
        .values()
        .zip(1..)
        .flat_map(|(&count, k)| std::iter::repeat_n(k, count as usize))
        .collect();
    chi_square(
        "orders: status values (population uniform(1..4))",
        &numbered,
        &pmf(&status_pop),
    );
    ks_spec("orders: total", totals, "gaussian(1..100k)");
    eprintln!("shop: done in {:.1} s", started.elapsed().as_secs_f64());
}
