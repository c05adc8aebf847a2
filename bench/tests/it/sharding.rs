//! doppio's ScyllaDB shard computation against scylla-rust-driver's (a dependency of the
//! bench): the shard of a million random tokens, for several shard counts and ignore-msb
//! values including ScyllaDB's default (12), and the shard of every source port. Pure
//! computation: no node needed.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::num::NonZeroU16;

use doppio_proto::sharding::Sharder;

const TOKENS: usize = 1_000_000;

/// A small xorshift generator (deterministic: a failure is reproducible).
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn shard_of_agrees_with_scylla_rust_driver_on_a_million_random_tokens() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let configs: [(u16, u8); 6] = [(1, 12), (4, 12), (7, 12), (12, 0), (64, 12), (255, 20)];
    let sharders: Vec<(Sharder, scylla::routing::Sharder)> = configs
        .iter()
        .map(|&(n, msb)| {
            let nr = NonZeroU16::new(n).unwrap();
            (
                Sharder {
                    nr_shards: nr,
                    ignore_msb: msb,
                },
                scylla::routing::Sharder::new(nr, msb),
            )
        })
        .collect();
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    // The ring's ends and the shard boundaries' neighbourhood, then random tokens.
    let edges = [i64::MIN + 1, -1, 0, 1, i64::MAX];
    let mut hits = vec![vec![0u64; 255]; sharders.len()];
    for i in 0..TOKENS + edges.len() {
        let raw = edges
            .get(i)
            .copied()
            .unwrap_or_else(|| random.next() as i64);
        // scylla's Token maps i64::MIN (never a Murmur3 token) to i64::MAX, as doppio's
        // murmur3 does.
        let token = scylla::routing::Token::new(raw);
        for (k, (ours, theirs)) in sharders.iter().enumerate() {
            let shard = ours.shard_of(token.value());
            assert_eq!(
                u32::from(shard),
                theirs.shard_of(token),
                "token {} with {ours:?}",
                token.value()
            );
            hits[k][usize::from(shard)] += 1;
        }
    }
    // Random tokens reach every shard.
    for (k, (ours, _)) in sharders.iter().enumerate() {
        let n = usize::from(ours.nr_shards.get());
        assert!(
            hits[k][..n].iter().all(|&h| h > 0),
            "{ours:?}: {:?}",
            &hits[k][..n]
        );
    }
}

#[test]
fn source_port_shards_agree_with_scylla_rust_driver() {
    let _turn = doppio_test_support::file_turn(module_path!());
    for n in [1u16, 3, 4, 7, 64] {
        let nr = NonZeroU16::new(n).unwrap();
        let ours = Sharder {
            nr_shards: nr,
            ignore_msb: 12,
        };
        let theirs = scylla::routing::Sharder::new(nr, 12);
        for port in 0..=u16::MAX {
            assert_eq!(
                u32::from(ours.shard_of_source_port(port)),
                theirs.shard_of_source_port(port)
            );
        }
        for shard in 0..n {
            let drawn = theirs.draw_source_port_for_shard(u32::from(shard));
            assert!(ours.source_ports(shard, 49152).any(|p| p == drawn));
        }
    }
}
