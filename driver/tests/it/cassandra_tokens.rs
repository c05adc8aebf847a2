//! The driver's Murmur3 token of a partition key equals Cassandra's `token(...)`, for 10,000
//! keys of several key types (int, bigint, text of every tail length with bytes above 0x7f,
//! uuid, blob) and composite partition keys whose components are bound in another order
//! than the key's (so the PREPARED partition-key indexes are exercised too).

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use doppio_driver::proto::consistency::Consistency;
use doppio_driver::proto::value::CqlValue;
use doppio_driver::{Session, SessionConfig};

use crate::support;

use doppio_driver::rt::Runtime;
use support::{cassandra, create_keyspace_cql, keyspace, on_runtime};

/// Keys per table; five tables make 10,000.
const KEYS: u64 = 2_000;

struct Xorshift(u64);

impl Xorshift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next() as u8).collect()
    }
}

/// A UTF-8 string of `len` bytes or a little more, with multi-byte characters (bytes above
/// 0x7f, which Cassandra's Murmur3 reads sign-extended in the tail).
fn text(r: &mut Xorshift, len: usize) -> String {
    let mut s = String::new();
    while s.len() < len {
        match r.next() % 3 {
            0 => s.push('é'),
            1 => s.push('€'),
            _ => s.push(char::from(b'a' + (r.next() % 26) as u8)),
        }
    }
    s
}

struct Table {
    /// Column definitions, partition key first.
    create: &'static str,
    /// The INSERT; its bind order may differ from the key's.
    insert: &'static str,
    /// The partition-key columns in key order, for `token(...)`.
    key: &'static str,
    /// Where each bind marker of the INSERT comes from, as an index into the key columns
    /// (None: the value column).
    binds: &'static [Option<usize>],
    /// Makes the key's values (in key order) of key `i`.
    make: fn(&mut Xorshift, u64) -> Vec<CqlValue>,
}

fn tables() -> Vec<Table> {
    vec![
        Table {
            create: "(k int, v int, PRIMARY KEY (k))",
            insert: "INSERT INTO {t} (k, v) VALUES (?, ?)",
            key: "k",
            binds: &[Some(0), None],
            // Distinct keys spread over the whole range (an odd multiplier is a bijection).
            make: |_, i| vec![CqlValue::Int((i as u32).wrapping_mul(2_654_435_761) as i32)],
        },
        Table {
            create: "(k bigint, v int, PRIMARY KEY (k))",
            insert: "INSERT INTO {t} (v, k) VALUES (?, ?)",
            key: "k",
            binds: &[None, Some(0)],
            make: |_, i| {
                vec![CqlValue::Bigint(
                    i.wrapping_mul(0x9e37_79b9_7f4a_7c15) as i64
                )]
            },
        },
        Table {
            create: "(k text, v int, PRIMARY KEY (k))",
            insert: "INSERT INTO {t} (k, v) VALUES (?, ?)",
            // Every length 0..40 (all tail lengths, several whole blocks), repeated.
            key: "k",
            binds: &[Some(0), None],
            make: |r, i| {
                vec![CqlValue::Text(format!(
                    "{i}:{}",
                    text(r, (i % 41) as usize)
                ))]
            },
        },
        Table {
            create: "(k uuid, v int, PRIMARY KEY (k))",
            insert: "INSERT INTO {t} (k, v) VALUES (?, ?)",
            key: "k",
            binds: &[Some(0), None],
            make: |r, _| {
                let mut u = [0u8; 16];
                u.copy_from_slice(&r.bytes(16));
                u[6] = (u[6] & 0x0f) | 0x40; // version 4
                u[8] = (u[8] & 0x3f) | 0x80;
                vec![CqlValue::Uuid(u)]
            },
        },
        Table {
            create: "(a int, b text, c blob, v int, PRIMARY KEY ((a, b, c)))",
            // Bound as c, v, a, b: the key's indexes are [2, 3, 0].
            insert: "INSERT INTO {t} (c, v, a, b) VALUES (?, ?, ?, ?)",
            key: "a, b, c",
            binds: &[Some(2), None, Some(0), Some(1)],
            make: |r, i| {
                let len = (i % 37) as usize;
                vec![
                    CqlValue::Int((i as u32).wrapping_mul(2_654_435_761) as i32),
                    CqlValue::Text(text(r, len)),
                    CqlValue::Blob(r.bytes((i % 23) as usize)),
                ]
            },
        },
    ]
}

fn driver_tokens_equal_cassandra_tokens_for_ten_thousand_keys(runtime: Runtime) {
    on_runtime(runtime, "tokens", || async {
        let mut config = SessionConfig::new(cassandra());
        config.consistency = Consistency::One;
        let s = Session::connect(config).await.unwrap();
        let ks = keyspace("tokens");
        s.query_unpaged(&create_keyspace_cql(&ks), &())
            .await
            .unwrap();
        s.use_keyspace(&ks).await.unwrap();
        let mut checked = 0u64;
        for (n, table) in tables().iter().enumerate() {
            checked += check_table(&s, n, table).await;
        }
        assert_eq!(checked, 5 * KEYS);
        s.query_unpaged(&format!("DROP KEYSPACE {ks}"), &())
            .await
            .unwrap();
    });
}

async fn check_table(s: &Session, n: usize, table: &Table) -> u64 {
    let name = format!("t{n}");
    s.query_unpaged(&format!("CREATE TABLE {name} {}", table.create), &())
        .await
        .unwrap();
    let insert = s
        .prepare(&table.insert.replace("{t}", &name))
        .await
        .unwrap();
    let key_columns = table.key.split(", ").count();
    // The driver's partition-key indexes: bind positions of the key columns, in key order.
    let expected_pk: Vec<u16> = (0..key_columns)
        .map(|k| table.binds.iter().position(|b| *b == Some(k)).unwrap() as u16)
        .collect();
    assert_eq!(
        insert.metadata().pk_indexes,
        expected_pk,
        "{}",
        table.insert
    );
    let mut r = Xorshift(0x9e37_79b9_7f4a_7c15 ^ n as u64);
    let mut driver_tokens = std::collections::HashMap::new();
    for i in 0..KEYS {
        let key = (table.make)(&mut r, i);
        let values: Vec<CqlValue> = table
            .binds
            .iter()
            .map(|b| match b {
                Some(k) => key[*k].clone(),
                None => CqlValue::Int(i as i32),
            })
            .collect();
        // The token the driver routes this INSERT by.
        let token = s.token_of(&insert, &values).expect("the key is bound");
        s.execute_unpaged(&insert, &values).await.unwrap();
        driver_tokens.insert(format!("{key:?}"), token);
    }
    // Cassandra's tokens of every key written, read back in pages.
    let scan = format!("SELECT {key}, token({key}) FROM {name}", key = table.key);
    let mut pages = s.query_iter(&scan, &());
    let mut seen = 0u64;
    while let Some(page) = pages.next_page().await.unwrap() {
        let rows = page.rows().unwrap();
        for row in rows.iter() {
            let values = row.unwrap().to_values().unwrap();
            let (key, token) = values.split_at(key_columns);
            let key: Vec<CqlValue> = key.iter().map(|v| v.clone().unwrap()).collect();
            let Some(CqlValue::Bigint(cassandra_token)) = token[0] else {
                panic!("token column: {:?}", token[0]);
            };
            let driver = driver_tokens
                .get(&format!("{key:?}"))
                .unwrap_or_else(|| panic!("{key:?} was not written"));
            assert_eq!(*driver, cassandra_token, "{}: key {key:?}", table.create);
            seen += 1;
        }
    }
    assert_eq!(seen, KEYS, "{}: every key is distinct", table.create);
    assert_eq!(driver_tokens.len() as u64, KEYS);
    seen
}

support::cassandra_runtime_tests!(
    CASSANDRA;
    driver_tokens_equal_cassandra_tokens_for_ten_thousand_keys,
);
