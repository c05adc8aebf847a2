//! Tests of the system tables and of the stub's little CQL parsing.

use super::*;

#[test]
fn conditional_statements_are_told_apart() {
    for lwt in [
        "INSERT INTO ks.t (k, v) VALUES (?, ?) IF NOT EXISTS",
        "update t SET v = ? WHERE k = ? if v = ?",
        "DELETE FROM t WHERE k = ? IF EXISTS;",
    ] {
        assert!(is_conditional(lwt), "{lwt}");
    }
    for plain in [
        "INSERT INTO t (k, v) VALUES (?, 'what IF it rains')",
        "SELECT k FROM t WHERE k = ?",
        "UPDATE t SET v = ? WHERE k = ?",
        "CREATE TABLE IF NOT EXISTS t (k int PRIMARY KEY)",
        "",
    ] {
        assert!(!is_conditional(plain), "{plain}");
    }
}

#[test]
fn selects_are_parsed_as_drivers_write_them() {
    let s = parse_select("SELECT host_id, rpc_address FROM system.peers").unwrap();
    assert_eq!(s.columns, ["host_id", "rpc_address"]);
    assert_eq!((s.keyspace, s.table), (Some("system"), "peers"));
    let s = parse_select("select * from system.local where key='local'").unwrap();
    assert_eq!(s.columns, ["*"]);
    assert_eq!(s.table, "local");
    let s = parse_select("SELECT key FROM system.local WHERE key = 'local'").unwrap();
    assert_eq!(s.columns, ["key"]);
    let s = parse_select("SELECT v FROM kv WHERE k = ?").unwrap();
    assert_eq!((s.keyspace, s.table), (None, "kv"));
    assert!(parse_select("INSERT INTO t (a) VALUES (?)").is_none());
    assert!(parse_select("SELECT fromage FROM").is_none());
}

#[test]
fn the_table_a_statement_modifies_is_found() {
    assert_eq!(
        modified_table("INSERT INTO ks.t (k, v) VALUES (?, ?) IF NOT EXISTS"),
        Some((Some("ks"), "t"))
    );
    assert_eq!(
        modified_table("insert into t(k) values (?)"),
        Some((None, "t"))
    );
    assert_eq!(
        modified_table("UPDATE \"Ks\".t SET v = ? WHERE k = ?"),
        Some((Some("Ks"), "t"))
    );
    assert_eq!(
        modified_table("DELETE v FROM ks.t WHERE k = ?;"),
        Some((Some("ks"), "t"))
    );
    assert_eq!(modified_table("DELETE FROM t;"), Some((None, "t")));
    assert_eq!(modified_table("SELECT v FROM ks.t"), None);
    assert_eq!(modified_table("INSERT"), None);
    assert_eq!(modified_table("UPDATE"), None);
}

#[test]
fn projections_follow_the_select_and_name_unknown_columns() {
    let tables = system_tables("127.0.0.1:9042".parse().unwrap());
    let local = &tables[0];
    let s = parse_select("SELECT tokens, key FROM system.local").unwrap();
    let p = project(local, &s).unwrap();
    assert_eq!(local.columns[p[0]].name, "tokens");
    assert_eq!(local.columns[p[1]].name, "key");
    let bad = parse_select("SELECT nope FROM system.local").unwrap();
    let e = project(local, &bad).unwrap_err();
    assert_eq!(e.column, "nope");
    assert_eq!(
        e.to_string(),
        format!(
            "Undefined column name nope in table {}.{}",
            local.keyspace, local.name
        )
    );
    let all = parse_select("SELECT * FROM system.local").unwrap();
    assert_eq!(project(local, &all).unwrap().len(), local.columns.len());
}

#[test]
fn a_cluster_node_lists_itself_locally_and_the_others_as_peers() {
    let node = |i: u8, tokens: Vec<i64>| NodeRow {
        addr: SocketAddr::from(([127, 0, 0, i], 9042)),
        host_id: [i; 16],
        tokens,
        data_center: format!("dc{}", i % 2),
        rack: format!("rack{i}"),
    };
    let tables = node_tables(&node(2, vec![-5, 7]), &[node(1, vec![3]), node(3, vec![9])]);
    let cell = |t: &Table, row: usize, name: &str| {
        let i = t.columns.iter().position(|c| c.name == name).unwrap();
        t.rows[row][i].clone()
    };
    let local = &tables[0];
    assert_eq!(
        cell(local, 0, "rpc_address"),
        Some(CqlValue::Inet([127, 0, 0, 2].into()))
    );
    assert_eq!(cell(local, 0, "host_id"), Some(CqlValue::Uuid([2; 16])));
    // Each node's data center and rack, its own locally and the others' as peers.
    assert_eq!(cell(local, 0, "data_center"), text("dc0"));
    assert_eq!(cell(local, 0, "rack"), text("rack2"));
    assert_eq!(
        cell(local, 0, "tokens"),
        Some(CqlValue::Set(vec![
            CqlValue::Text("-5".into()),
            CqlValue::Text("7".into())
        ]))
    );
    for t in &tables[1..3] {
        assert_eq!(t.rows.len(), 2, "{}", t.name);
        assert_eq!(
            cell(t, 1, "peer"),
            Some(CqlValue::Inet([127, 0, 0, 3].into()))
        );
        assert_eq!(cell(t, 1, "host_id"), Some(CqlValue::Uuid([3; 16])));
        assert_eq!(cell(t, 0, "data_center"), text("dc1"));
        assert_eq!(cell(t, 1, "rack"), text("rack3"));
        assert_eq!(
            cell(t, 0, "tokens"),
            Some(CqlValue::Set(vec![CqlValue::Text("3".into())]))
        );
        // Every row has a value (or null) for every column.
        assert!(t.rows.iter().all(|r| r.len() == t.columns.len()));
    }
    assert_eq!(
        cell(&tables[2], 0, "native_port"),
        Some(CqlValue::Int(9042))
    );
    assert_eq!(
        cell(&tables[1], 0, "rpc_address"),
        Some(CqlValue::Inet([127, 0, 0, 1].into()))
    );
}

#[test]
fn markers_are_counted_outside_quotes() {
    assert_eq!(count_markers("SELECT v FROM t WHERE k = ? AND c = ?"), 2);
    assert_eq!(count_markers("SELECT '?' FROM \"t?\" WHERE k = ?"), 1);
    assert_eq!(count_markers("SELECT key FROM system.local"), 0);
}
