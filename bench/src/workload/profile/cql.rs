//! The little CQL a profile's conversion needs read, without a server: a CREATE TABLE's
//! columns and primary key, which column each bind marker of a query stands for, and
//! statements rewritten to name the profile's keyspace (cassandra-stress runs them after
//! `USE keyspace`; a doppio workload names it in each statement).

/// A column's place in the primary key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ColumnKind {
    /// Part of the partition key.
    PartitionKey,
    /// A clustering column.
    Clustering,
    /// A static column.
    Static,
    /// Any other column.
    Regular,
}

/// A column of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Column {
    /// Its name (lower case unless it was quoted).
    pub(crate) name: String,
    /// Its CQL type as written, lower case, spaces removed (`map<text,int>`).
    pub(crate) cql_type: String,
    /// Its place in the key.
    pub(crate) kind: ColumnKind,
}

/// A table read from its CREATE TABLE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Table {
    /// Its name (without keyspace).
    pub(crate) name: String,
    /// Partition key columns in key order, then clustering columns in key order, then the
    /// rest in definition order.
    pub(crate) columns: Vec<Column>,
}

impl Table {
    /// The columns of one kind, in order.
    pub(crate) fn of(&self, kind: ColumnKind) -> impl Iterator<Item = &Column> {
        self.columns.iter().filter(move |c| c.kind == kind)
    }

    /// The column named `name`.
    pub(crate) fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }
}

/// A token of CQL text, with its byte offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Token {
    /// A name or keyword, as written (a quoted name without its quotes, `quoted` set).
    Ident {
        /// The text.
        text: String,
        /// It was written in double quotes.
        quoted: bool,
    },
    /// `?`.
    Marker,
    /// A string, number or other literal.
    Literal,
    /// Punctuation or an operator (`(`, `)`, `,`, `.`, `=`, `<=`, `+`, ...).
    Punct(String),
}

/// Splits `cql` into tokens with their byte offsets.
pub(crate) fn tokens(cql: &str) -> Vec<(usize, Token)> {
    let b = cql.as_bytes();
    let mut out = Vec::new();
    let mut k = 0;
    while k < b.len() {
        let c = b[k];
        let start = k;
        if c.is_ascii_whitespace() {
            k += 1;
        } else if c == b'-' && b.get(k + 1) == Some(&b'-') {
            while k < b.len() && b[k] != b'\n' {
                k += 1;
            }
        } else if c == b'\'' || c == b'"' {
            k += 1;
            let mut text = Vec::new();
            while k < b.len() {
                if b[k] == c {
                    if b.get(k + 1) == Some(&c) {
                        text.push(c);
                        k += 2;
                        continue;
                    }
                    break;
                }
                text.push(b[k]);
                k += 1;
            }
            k += 1;
            out.push((
                start,
                if c == b'"' {
                    Token::Ident {
                        text: String::from_utf8_lossy(&text).into_owned(),
                        quoted: true,
                    }
                } else {
                    Token::Literal
                },
            ));
        } else if c.is_ascii_alphabetic() || c == b'_' {
            while k < b.len() && (b[k].is_ascii_alphanumeric() || b[k] == b'_') {
                k += 1;
            }
            out.push((
                start,
                Token::Ident {
                    text: cql[start..k].to_owned(),
                    quoted: false,
                },
            ));
        } else if c.is_ascii_digit() {
            while k < b.len() && (b[k].is_ascii_alphanumeric() || b[k] == b'.') {
                k += 1;
            }
            out.push((start, Token::Literal));
        } else if c == b'?' {
            k += 1;
            out.push((start, Token::Marker));
        } else {
            let two = cql.get(k..k + 2).unwrap_or("");
            let len = if matches!(two, "<=" | ">=" | "!=") {
                2
            } else {
                1
            };
            let len = if cql.is_char_boundary(k + len) {
                len
            } else {
                1
            };
            k += len;
            while !cql.is_char_boundary(k) {
                k += 1;
            }
            out.push((start, Token::Punct(cql[start..k].to_owned())));
        }
    }
    out
}

fn is_kw(t: &Token, kw: &str) -> bool {
    matches!(t, Token::Ident { text, quoted: false } if text.eq_ignore_ascii_case(kw))
}

fn punct(t: &Token, p: &str) -> bool {
    matches!(t, Token::Punct(s) if s == p)
}

/// A name as CQL reads it: lower case unless quoted.
fn name_of(t: &Token) -> Option<String> {
    match t {
        Token::Ident { text, quoted: true } => Some(text.clone()),
        Token::Ident { text, .. } => Some(text.to_lowercase()),
        _ => None,
    }
}

/// Reads a CREATE TABLE statement.
pub(crate) fn parse_table(cql: &str) -> Result<Table, String> {
    let toks = tokens(cql);
    let mut k = 0;
    let expect = |k: usize, kw: &str| toks.get(k).is_some_and(|(_, t)| is_kw(t, kw));
    if !(expect(0, "create") && (expect(1, "table") || expect(1, "columnfamily"))) {
        return Err("expected CREATE TABLE".into());
    }
    k += 2;
    if expect(k, "if") {
        k += 3;
    }
    let mut name = toks
        .get(k)
        .and_then(|(_, t)| name_of(t))
        .ok_or("expected the table's name")?;
    k += 1;
    if toks.get(k).is_some_and(|(_, t)| punct(t, ".")) {
        name = toks
            .get(k + 1)
            .and_then(|(_, t)| name_of(t))
            .ok_or("expected the table's name after the keyspace")?;
        k += 2;
    }
    if !toks.get(k).is_some_and(|(_, t)| punct(t, "(")) {
        return Err("expected `(` after the table's name".into());
    }
    // The body's items, split at commas outside parentheses and angle brackets.
    let mut items: Vec<Vec<Token>> = vec![Vec::new()];
    let mut depth = 0i32;
    k += 1;
    loop {
        let Some((_, t)) = toks.get(k) else {
            return Err("the column list is not closed".into());
        };
        k += 1;
        match t {
            Token::Punct(p) if p == "(" || p == "<" => depth += 1,
            Token::Punct(p) if (p == ")" || p == ">") && depth > 0 => depth -= 1,
            Token::Punct(p) if p == ")" => break,
            Token::Punct(p) if p == "," && depth == 0 => {
                items.push(Vec::new());
                continue;
            }
            _ => {}
        }
        if let Some(last) = items.last_mut() {
            last.push(t.clone());
        }
    }
    let mut columns: Vec<Column> = Vec::new();
    let mut partition: Vec<String> = Vec::new();
    let mut clustering: Vec<String> = Vec::new();
    for item in items.iter().filter(|i| !i.is_empty()) {
        if is_kw(&item[0], "primary") && item.get(1).is_some_and(|t| is_kw(t, "key")) {
            // PRIMARY KEY ((a, b), c) or PRIMARY KEY (a, c)
            let mut level = 0;
            let mut first_group = false;
            for (n, t) in item[2..].iter().enumerate() {
                match t {
                    Token::Punct(p) if p == "(" => {
                        level += 1;
                        if level == 2 && n == 1 {
                            first_group = true;
                        }
                    }
                    Token::Punct(p) if p == ")" => {
                        level -= 1;
                        if level == 1 {
                            first_group = false;
                            if partition.is_empty() {
                                return Err("an empty partition key".into());
                            }
                        }
                    }
                    Token::Punct(_) => {}
                    t => {
                        let Some(n) = name_of(t) else {
                            return Err("unexpected text in PRIMARY KEY".into());
                        };
                        if first_group || partition.is_empty() {
                            partition.push(n);
                        } else {
                            clustering.push(n);
                        }
                    }
                }
            }
            continue;
        }
        let cname = name_of(&item[0]).ok_or("expected a column name")?;
        let mut ty = String::new();
        let mut kind = ColumnKind::Regular;
        let mut n = 1;
        while n < item.len() {
            if is_kw(&item[n], "primary") {
                partition.push(cname.clone());
                break;
            }
            if is_kw(&item[n], "static") {
                kind = ColumnKind::Static;
                break;
            }
            match &item[n] {
                Token::Ident { text, .. } => ty.push_str(&text.to_lowercase()),
                Token::Punct(p) => ty.push_str(p),
                Token::Literal => {
                    // A vector's dimension.
                    ty.push('#');
                }
                Token::Marker => return Err("`?` in a column definition".into()),
            }
            n += 1;
        }
        if ty.is_empty() {
            return Err(format!("column {cname} has no type"));
        }
        columns.push(Column {
            name: cname,
            cql_type: ty,
            kind,
        });
    }
    if partition.is_empty() {
        return Err("no PRIMARY KEY".into());
    }
    let mut ordered = Vec::with_capacity(columns.len());
    for (names, kind) in [
        (&partition, ColumnKind::PartitionKey),
        (&clustering, ColumnKind::Clustering),
    ] {
        for n in names {
            let Some(c) = columns.iter().find(|c| &c.name == n) else {
                return Err(format!("key column {n} is not a column of the table"));
            };
            ordered.push(Column { kind, ..c.clone() });
        }
    }
    for c in columns {
        if !partition.contains(&c.name) && !clustering.contains(&c.name) {
            ordered.push(c);
        }
    }
    Ok(Table {
        name,
        columns: ordered,
    })
}

/// The column each bind marker of `cql` stands for, in marker order: the column left of the
/// marker's comparison (`c = ?`, `c >= ?`, `c IN ?`, `c CONTAINS ?`, `c = c + ?`), the
/// matching column of a tuple relation (`(a, b) > (?, ?)`), or of an INSERT's column list.
/// A marker that stands for no column (`LIMIT ?`, `token(k) > ?`) is an error naming it.
pub(crate) fn marker_columns(cql: &str) -> Result<Vec<String>, String> {
    let toks: Vec<Token> = tokens(cql).into_iter().map(|(_, t)| t).collect();
    let mut out = Vec::new();
    let open_of = |close: usize| -> Option<usize> {
        let mut depth = 0;
        for k in (0..=close).rev() {
            if punct(&toks[k], ")") {
                depth += 1;
            } else if punct(&toks[k], "(") {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
        }
        None
    };
    // The names of a parenthesised list whose `(` is at `open`.
    let names_in = |open: usize| -> Vec<Option<String>> {
        let mut names = Vec::new();
        let mut k = open + 1;
        while k < toks.len() && !punct(&toks[k], ")") {
            if !punct(&toks[k], ",") {
                names.push(name_of(&toks[k]));
            }
            k += 1;
        }
        names
    };
    let is_op = |t: &Token| {
        matches!(t, Token::Punct(p) if matches!(p.as_str(), "=" | "<" | ">" | "<=" | ">=" | "!="))
            || is_kw(t, "in")
            || is_kw(t, "contains")
            || is_kw(t, "key")
    };
    for (k, t) in toks.iter().enumerate() {
        if *t != Token::Marker {
            continue;
        }
        let nth = out.len() + 1;
        let fail = |why: &str| Err(format!("bind marker {nth} {why}"));
        let Some(prev) = k.checked_sub(1).map(|p| &toks[p]) else {
            return fail("starts the statement");
        };
        let column = if is_op(prev) || punct(prev, "+") || punct(prev, "-") {
            // Walk left over `c +` of `c = c + ?` and `KEY` of `CONTAINS KEY`.
            let mut lhs = k - 1;
            if punct(prev, "+") || punct(prev, "-") {
                lhs = lhs.saturating_sub(2);
            }
            while lhs > 0 && is_op(&toks[lhs]) {
                lhs -= 1;
            }
            if punct(&toks[lhs], ")") {
                let open = open_of(lhs).unwrap_or(0);
                if open > 0 && is_kw(&toks[open - 1], "token") {
                    return fail("stands for a token (token(...) > ?): not supported yet");
                }
                return fail("compares a tuple with one marker: write (?, ?)");
            }
            if is_kw(&toks[lhs], "limit")
                || is_kw(&toks[lhs], "ttl")
                || is_kw(&toks[lhs], "timestamp")
            {
                return fail("is not a column's value");
            }
            name_of(&toks[lhs])
        } else if punct(prev, "(") || punct(prev, ",") {
            // Inside a list: a tuple relation, token(?, ...) or VALUES (...).
            let mut open = k;
            let mut depth = 0;
            while open > 0 {
                open -= 1;
                if punct(&toks[open], ")") {
                    depth += 1;
                } else if punct(&toks[open], "(") {
                    if depth == 0 {
                        break;
                    }
                    depth -= 1;
                }
            }
            let position = toks[open + 1..k].iter().filter(|t| punct(t, ",")).count();
            let before = open.checked_sub(1).map(|p| &toks[p]);
            match before {
                Some(t) if is_kw(t, "token") => {
                    return fail("stands for a token (token(?) ...): not supported yet")
                }
                Some(t) if is_kw(t, "values") => {
                    // INSERT INTO t (a, b) VALUES (?, ?): the column list before VALUES.
                    let close = open - 2;
                    let cols_open = open_of(close).unwrap_or(0);
                    names_in(cols_open).get(position).cloned().flatten()
                }
                Some(t) if is_op(t) => {
                    let mut lhs = open - 1;
                    while lhs > 0 && is_op(&toks[lhs]) {
                        lhs -= 1;
                    }
                    if punct(&toks[lhs], ")") {
                        let cols_open = open_of(lhs).unwrap_or(0);
                        if cols_open > 0 && is_kw(&toks[cols_open - 1], "token") {
                            return fail("stands for a token: not supported yet");
                        }
                        names_in(cols_open).get(position).cloned().flatten()
                    } else {
                        // c IN (?, ?)
                        name_of(&toks[lhs])
                    }
                }
                _ => None,
            }
        } else {
            None
        };
        match column {
            Some(c) => out.push(c),
            None => return fail("stands for no column (only `column <op> ?` is read)"),
        }
    }
    Ok(out)
}

/// `cql` with the profile's keyspace written before the table, type or view it creates or
/// names after FROM, INTO, UPDATE, TABLE, ON, TYPE or VIEW (a name already qualified is left
/// alone), and `IF NOT EXISTS` added to a CREATE that lacks it, so that running the schema
/// twice is not an error (cassandra-stress ignores "already exists").
pub(crate) fn qualify(cql: &str, keyspace: &str) -> String {
    let toks = tokens(cql);
    let mut inserts: Vec<(usize, String)> = Vec::new();
    let creates = toks.first().is_some_and(|(_, t)| is_kw(t, "create"));
    for (n, (_, t)) in toks.iter().enumerate() {
        let object = ["table", "columnfamily", "type", "view", "index", "keyspace"]
            .iter()
            .any(|kw| is_kw(t, kw));
        let mut k = n + 1;
        if creates && object && n <= 3 {
            let has = toks.get(k).is_some_and(|(_, t)| is_kw(t, "if"));
            if has {
                k += 3;
            } else if let Some((at, _)) = toks.get(k) {
                inserts.push((*at, "IF NOT EXISTS ".into()));
            }
        }
        let names_object = ["from", "into", "update", "on"]
            .iter()
            .any(|kw| is_kw(t, kw))
            || (object && !is_kw(t, "index") && !is_kw(t, "keyspace") && n <= 3);
        if !names_object {
            continue;
        }
        if toks.get(k).is_some_and(|(_, t)| is_kw(t, "if")) {
            k += if toks.get(k + 1).is_some_and(|(_, t)| is_kw(t, "not")) {
                3
            } else {
                2
            };
        }
        let Some((at, Token::Ident { .. })) = toks.get(k) else {
            continue;
        };
        if toks.get(k + 1).is_some_and(|(_, t)| punct(t, ".")) {
            continue;
        }
        inserts.push((*at, format!("{keyspace}.")));
    }
    let mut out = cql.trim().to_owned();
    let trim = cql.len() - cql.trim_start().len();
    // From the end, so that earlier offsets stay valid; at one offset the later text first,
    // so that `IF NOT EXISTS ` ends up before `ks.`.
    inserts.reverse();
    inserts.sort_by_key(|b| std::cmp::Reverse(b.0));
    for (at, text) in inserts {
        out.insert_str(at - trim, &text);
    }
    out.trim_end_matches(';').trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_reads_with_its_key() {
        let t = parse_table(
            "CREATE TABLE IF NOT EXISTS ks.Events (\n  \"Src\" text, day int, at timestamp,\n  \
             tags set<text>, attrs map<text, frozen<list<int>>>, note text static,\n  \
             PRIMARY KEY ((\"Src\", day), at)\n) WITH CLUSTERING ORDER BY (at DESC)",
        )
        .unwrap();
        assert_eq!(t.name, "events");
        let names: Vec<(&str, &str, ColumnKind)> = t
            .columns
            .iter()
            .map(|c| (c.name.as_str(), c.cql_type.as_str(), c.kind))
            .collect();
        assert_eq!(
            names,
            [
                ("Src", "text", ColumnKind::PartitionKey),
                ("day", "int", ColumnKind::PartitionKey),
                ("at", "timestamp", ColumnKind::Clustering),
                ("tags", "set<text>", ColumnKind::Regular),
                ("attrs", "map<text,frozen<list<int>>>", ColumnKind::Regular),
                ("note", "text", ColumnKind::Static),
            ]
        );
        let t = parse_table("create table kv (k int primary key, v blob)").unwrap();
        assert_eq!(t.columns[0].kind, ColumnKind::PartitionKey);
        let t = parse_table("CREATE TABLE t (a int, b int, c int, PRIMARY KEY (a, b, c))").unwrap();
        assert_eq!(t.of(ColumnKind::Clustering).count(), 2);
        for bad in [
            "CREATE INDEX x ON t (a)",
            "CREATE TABLE t (a int, b int)",
            "CREATE TABLE t (a int, PRIMARY KEY (z))",
            "CREATE TABLE t (a int PRIMARY KEY",
        ] {
            assert!(parse_table(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn markers_name_their_columns() {
        let m = |q: &str| marker_columns(q);
        assert_eq!(
            m("SELECT * FROM t WHERE a = ? AND b >= ? AND c IN (?, ?) LIMIT 10").unwrap(),
            ["a", "b", "c", "c"]
        );
        assert_eq!(
            m("select * from t where (x, \"Y\") > (?, ?)").unwrap(),
            ["x", "Y"]
        );
        assert_eq!(m("INSERT INTO t (a, b) VALUES (?, ?)").unwrap(), ["a", "b"]);
        assert_eq!(
            m("UPDATE t SET s = s + ?, v = ? WHERE k = ?").unwrap(),
            ["s", "v", "k"]
        );
        assert_eq!(
            m("SELECT * FROM t WHERE tags CONTAINS ?").unwrap(),
            ["tags"]
        );
        assert_eq!(
            m("SELECT * FROM t WHERE s = 'a?b' AND k = ?").unwrap(),
            ["k"]
        );
        for (q, says) in [
            ("SELECT * FROM t WHERE a = ? LIMIT ?", "marker 2"),
            ("SELECT * FROM t WHERE token(a) > ?", "token"),
            ("SELECT * FROM t WHERE token(a) > token(?)", "token"),
        ] {
            let e = m(q).unwrap_err();
            assert!(e.contains(says), "{q}: {e}");
        }
    }

    #[test]
    fn statements_name_the_keyspace() {
        assert_eq!(
            qualify("SELECT * FROM t WHERE a = ?;", "ks"),
            "SELECT * FROM ks.t WHERE a = ?"
        );
        assert_eq!(
            qualify("CREATE TABLE t (a int PRIMARY KEY)", "ks"),
            "CREATE TABLE IF NOT EXISTS ks.t (a int PRIMARY KEY)"
        );
        assert_eq!(
            qualify(
                "create table if not exists other.t (a int primary key)",
                "ks"
            ),
            "create table if not exists other.t (a int primary key)"
        );
        assert_eq!(
            qualify("CREATE INDEX i ON t (a)", "ks"),
            "CREATE INDEX IF NOT EXISTS i ON ks.t (a)"
        );
        assert_eq!(
            qualify("CREATE TYPE addr (street text)", "ks"),
            "CREATE TYPE IF NOT EXISTS ks.addr (street text)"
        );
        assert_eq!(
            qualify("UPDATE \"T\" SET v = ? WHERE k = ?", "ks"),
            "UPDATE ks.\"T\" SET v = ? WHERE k = ?"
        );
        assert_eq!(
            qualify(
                "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy'}",
                "ks"
            ),
            "CREATE KEYSPACE IF NOT EXISTS ks WITH replication = {'class': 'SimpleStrategy'}"
        );
    }
}
