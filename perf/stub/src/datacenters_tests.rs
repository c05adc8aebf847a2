//! Tests of the data-center layout and of NetworkTopologyStrategy's placement.

use std::net::SocketAddr;

use super::*;
use crate::cluster::Ring;

fn nz(n: u8) -> NonZeroU8 {
    NonZeroU8::new(n).unwrap_or(NonZeroU8::MIN)
}

fn layout(spec: &str, racks: u8, rf: u8) -> Datacenters {
    Datacenters::parse(spec, nz(racks), rf).unwrap_or_else(|e| panic!("{spec}: {e}"))
}

/// The replicas of `token`, grouped by data center name, each group sorted.
fn by_dc(ring: &Ring, token: i64) -> Vec<(&str, Vec<u8>)> {
    let mut out: Vec<(&str, Vec<u8>)> = Vec::new();
    for &n in ring.replicas(token) {
        let dc = ring.datacenter_of(n);
        match out.iter_mut().find(|(d, _)| *d == dc) {
            Some((_, v)) => v.push(n),
            None => out.push((dc, vec![n])),
        }
    }
    for (_, v) in &mut out {
        v.sort_unstable();
    }
    out.sort();
    out
}

/// Every ring position's token (a token equal to a position's belongs to it).
fn position_tokens(ring: &Ring, nodes: u8) -> Vec<i64> {
    let mut all: Vec<i64> = (0..nodes).flat_map(|n| ring.tokens_of(n)).collect();
    all.sort_unstable();
    all
}

#[test]
fn the_layout_is_parsed_and_each_node_placed_in_its_data_center_and_rack() {
    let l = layout("dc1:3, dc2:2", 2, 2);
    assert_eq!(l.total_nodes(), 5);
    assert_eq!(l.replication(), 4);
    assert_eq!(l.places(), [(0, 0), (0, 1), (0, 0), (1, 0), (1, 1)]);
    assert_eq!(
        l.replication_map(),
        [("dc1".to_owned(), 2), ("dc2".to_owned(), 2)]
    );
    // A data center of fewer nodes than racks uses as many racks as it has nodes.
    assert_eq!(layout("a:1,b:2", 3, 1).places(), [(0, 0), (1, 0), (1, 1)]);
}

#[test]
fn a_bad_layout_is_a_typed_error_in_one_line() {
    let bad = |spec: &str, rf: u8| Datacenters::parse(spec, nz(2), rf).unwrap_err();
    assert_eq!(bad("", 1), DatacenterError::None);
    assert_eq!(bad("dc1", 1), DatacenterError::Syntax("dc1".into()));
    assert_eq!(bad("dc1:x", 1), DatacenterError::Syntax("dc1:x".into()));
    assert_eq!(bad(":3", 1), DatacenterError::Syntax(":3".into()));
    assert_eq!(bad("d c:3", 1), DatacenterError::Syntax("d c:3".into()));
    assert_eq!(bad("dc1:300", 1), DatacenterError::Syntax("dc1:300".into()));
    assert_eq!(bad("dc1:0", 1), DatacenterError::NoNodes("dc1".into()));
    assert_eq!(bad("a:1,a:2", 1), DatacenterError::Duplicate("a".into()));
    assert_eq!(bad("a:200,b:100", 1), DatacenterError::TooManyNodes(300));
    assert_eq!(bad("a:3", 0), DatacenterError::NoReplicas);
    let above = bad("dc1:3,dc2:2", 3);
    assert_eq!(
        above,
        DatacenterError::ReplicationAboveNodes {
            name: "dc2".into(),
            replication_factor: 3,
            nodes: 2
        }
    );
    for e in [above, bad("dc1", 1), bad("", 1)] {
        assert!(!e.to_string().contains('\n'), "{e}");
    }
}

#[test]
fn each_data_center_gets_its_factor_on_distinct_racks_when_it_has_enough() {
    // Two data centers of 3 nodes on 3 racks, RF 3 each: every node of each is a replica.
    let l = layout("dc1:3,dc2:3", 3, 3);
    let ring = Ring::with_datacenters(&l, 8);
    assert_eq!(ring.replication(), 6);
    for t in position_tokens(&ring, 6) {
        assert_eq!(
            by_dc(&ring, t),
            [("dc1", vec![0, 1, 2]), ("dc2", vec![3, 4, 5])]
        );
        // The primary is the position's owner.
        assert_eq!(ring.replicas(t)[0], ring.replicas(t - 1)[0]);
    }
    // 4 + 4 nodes on 2 racks, RF 2: one replica per rack in each data center, and the
    // first node of each rack the walk meets.
    let l = layout("dc1:4,dc2:4", 2, 2);
    let ring = Ring::with_datacenters(&l, 4);
    let places = l.places();
    let tokens = position_tokens(&ring, 8);
    let mut replicas_seen = [0u32; 8];
    for &t in &tokens {
        let r = ring.replicas(t);
        assert_eq!(r.len(), 4);
        for (dc, nodes) in by_dc(&ring, t) {
            assert_eq!(nodes.len(), 2, "{dc} at {t}: {r:?}");
            let racks: Vec<u8> = nodes.iter().map(|&n| places[usize::from(n)].1).collect();
            assert_ne!(racks[0], racks[1], "{dc} at {t}: {r:?}");
        }
        for &n in r {
            replicas_seen[usize::from(n)] += 1;
        }
        // Taken in walk order: the first node of each (data center, rack) met.
        let start = tokens.iter().position(|&x| x == t).unwrap_or(0);
        let owners: Vec<u8> = (0..tokens.len())
            .map(|k| ring.replicas(tokens[(start + k) % tokens.len()])[0])
            .collect();
        let mut expect = Vec::new();
        let mut seen = Vec::new();
        for n in owners {
            let place = places[usize::from(n)];
            if !seen.contains(&place) {
                seen.push(place);
                expect.push(n);
            }
        }
        assert_eq!(r, expect.as_slice(), "at {t}");
    }
    assert!(replicas_seen.iter().all(|&n| n > 0), "{replicas_seen:?}");
}

#[test]
fn with_fewer_racks_than_replicas_the_first_same_rack_nodes_met_fill_in() {
    // One data center of 4 nodes on 2 racks (0, 2 on rack1; 1, 3 on rack2), RF 3: one
    // node per rack, then one repeat, the first one the walk meets.
    let l = layout("dc1:4", 2, 3);
    let places = l.places();
    let wants = DcWant::of(&l);
    let mut out = Vec::new();
    // Walk 0, 2, 1, 3: 0 (rack1, new), 2 (rack1, the one repeat allowed), 1 (rack2, new).
    place([0u8, 2, 1, 3].into_iter(), &places, &wants, &mut out);
    assert_eq!(out, [0, 2, 1]);
    // Walk 0, 1, 3, 2: 0 and 1 on new racks, 3 the first repeat.
    out.clear();
    place([0u8, 1, 3, 2].into_iter(), &places, &wants, &mut out);
    assert_eq!(out, [0, 1, 3]);
    // With 3 racks and RF 3 there is no repeat: 2 (rack1 again) is skipped for 3's rack.
    let l3 = layout("dc1:4", 3, 3);
    let mut out = Vec::new();
    // Racks: 0 -> rack1, 1 -> rack2, 2 -> rack3, 3 -> rack1.
    place(
        [0u8, 3, 1, 2].into_iter(),
        &l3.places(),
        &DcWant::of(&l3),
        &mut out,
    );
    assert_eq!(out, [0, 1, 2]);
    // Two data centers at once, walked together, vnodes repeating nodes.
    let l2 = layout("a:2,b:2", 1, 2);
    let mut out = Vec::new();
    place(
        [2u8, 2, 0, 3, 0, 1].into_iter(),
        &l2.places(),
        &DcWant::of(&l2),
        &mut out,
    );
    assert_eq!(out, [2, 0, 3, 1]);
    // On a whole ring, RF 3 over 2 racks: every position has 3 distinct replicas
    // covering both racks.
    let ring = Ring::with_datacenters(&l, 8);
    for t in position_tokens(&ring, 4) {
        let r = ring.replicas(t);
        assert_eq!(r.len(), 3);
        let mut d = r.to_vec();
        d.sort_unstable();
        d.dedup();
        assert_eq!(d.len(), 3, "{r:?}");
        assert!(r.iter().any(|&n| places[usize::from(n)].1 == 0), "{r:?}");
        assert!(r.iter().any(|&n| places[usize::from(n)].1 == 1), "{r:?}");
    }
}

#[test]
fn every_node_row_gives_the_same_data_centers_and_racks() {
    let l = layout("dc1:3,dc2:3", 2, 3);
    let ring = Ring::with_datacenters(&l, 4);
    let addrs: Vec<SocketAddr> = (1..=6)
        .map(|i| SocketAddr::from(([127, 0, 0, i], 9042)))
        .collect();
    let rows = ring.node_rows(&addrs);
    let got: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r.data_center.as_str(), r.rack.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("dc1", "rack1"),
            ("dc1", "rack2"),
            ("dc1", "rack1"),
            ("dc2", "rack1"),
            ("dc2", "rack2"),
            ("dc2", "rack1"),
        ]
    );
    // Each node's tables: itself in system.local, the others in system.peers(_v2), and
    // all of them agree on every node's data center and rack.
    for (i, local) in rows.iter().enumerate() {
        let others: Vec<_> = rows
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, r)| r.clone())
            .collect();
        let tables = crate::tables::node_tables(local, &others);
        let mut seen: Vec<(String, String, String)> = Vec::new();
        for t in &tables[..3] {
            let col = |name: &str| t.columns.iter().position(|c| c.name == name);
            let (Some(dc), Some(rack)) = (col("data_center"), col("rack")) else {
                panic!("{} has no data_center or rack", t.name);
            };
            let addr = col("rpc_address").or(col("native_address"));
            for row in &t.rows {
                let text = |k: usize| match &row[k] {
                    Some(doppio_proto::value::CqlValue::Text(s)) => s.clone(),
                    other => panic!("{other:?}"),
                };
                let ip = match addr.and_then(|a| row[a].clone()) {
                    Some(doppio_proto::value::CqlValue::Inet(ip)) => ip.to_string(),
                    other => panic!("{other:?}"),
                };
                seen.push((ip, text(dc), text(rack)));
            }
        }
        for r in &rows {
            let ip = r.addr.ip().to_string();
            let want = (ip.clone(), r.data_center.clone(), r.rack.clone());
            let n = seen.iter().filter(|s| **s == want).count();
            // Locally once; or once in peers and once in peers_v2.
            let expected = if r.addr == local.addr { 1 } else { 2 };
            assert_eq!(n, expected, "node {i} on {ip}: {seen:?}");
        }
    }
    // The keyspace is listed with each data center's factor.
    let mut tables = crate::tables::node_tables(&rows[0], &rows[1..]);
    crate::tables::add_network_topology_keyspace(&mut tables, "ks", &l.replication_map());
    let ks = tables
        .iter()
        .find(|t| t.name == "keyspaces")
        .and_then(|t| t.rows.last().cloned())
        .unwrap_or_default();
    let Some(Some(doppio_proto::value::CqlValue::Map(m))) = ks.get(2).cloned() else {
        panic!("{ks:?}");
    };
    let text = |s: &str| doppio_proto::value::CqlValue::Text(s.into());
    assert_eq!(
        m,
        [
            (
                text("class"),
                text("org.apache.cassandra.locator.NetworkTopologyStrategy")
            ),
            (text("dc1"), text("3")),
            (text("dc2"), text("3")),
        ]
    );
}
