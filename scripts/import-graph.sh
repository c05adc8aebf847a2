#!/usr/bin/env bash
# The module import graph of each workspace crate, and a check that it has no circle.
#
# Read textually from the sources (no compiler): every `crate::a::...`, `super::...` and
# `self::...` path in code (comments, doc comments, strings and #[cfg(test)] items left out;
# `use crate::{a::X, b::Y}` groups followed into) is an arrow from the module of the file to
# the module it names. Granularity: a top-level module of the crate and all its submodules
# are one node (`session/mod.rs`, `session/run.rs` and `session/stats.rs` are all `session`),
# so `control.rs` <-> `session/mod.rs` is a circle, and so is `pool.rs` -> `session::stats`
# while `session` imports `pool`. Arrows inside a node are not drawn. The crate root (lib.rs,
# main.rs) is the crate's map, not a node; a path to an item it re-exports (`crate::Error`
# for `pub use error::Error`) counts as an arrow to the module the item comes from.
#
# Usage: scripts/import-graph.sh [--dot] [CRATE_DIR...]
#   (no CRATE_DIR: every member of the workspace)
#   --dot   print each crate's graph in Graphviz dot (arrows labelled with how many paths)
# Prints the arrows of each crate and every circle with the file:line of each arrow in it;
# exits 1 if any crate has a circle, 0 otherwise.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec python3 - "$@" <<'PY'
import os
import re
import sys
import tomllib

args = sys.argv[1:]
dot = "--dot" in args
crates = [a for a in args if a != "--dot"]
if not crates:
    with open("Cargo.toml", "rb") as f:
        crates = tomllib.load(f)["workspace"]["members"]

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def strip_code(text):
    """The text with comments, string and char literals blanked (line numbers kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            hashes = re.match(r'r(#*)"', text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            j = n if end < 0 else end + 1 + len(hashes)
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j + 1
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 4]) or c == "'" and re.match(r"'\\u\{[0-9a-fA-F]+\}'", text[i:i + 12]):
            j = text.find("'", i + 2 if text[i + 1] == "\\" else i + 1)
            out.append("' '")
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def drop_test_items(code):
    """Blanks every item marked #[cfg(test)] (a test module is not part of the graph)."""
    out, i = [], 0
    for m in re.finditer(r"#\[cfg\(test\)\]", code):
        if m.start() < i:
            continue
        out.append(code[i:m.start()])
        j = m.end()
        # The item ends at the `;` or the `}` closing its first brace, whichever comes first.
        depth, k = 0, j
        while k < len(code):
            ch = code[k]
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    k += 1
                    break
            elif ch == ";" and depth == 0:
                k += 1
                break
            k += 1
        out.append("\n" * code.count("\n", m.start(), k))
        i = k
    out.append(code[i:])
    return "".join(out)


def module_of(src, path):
    """`src/a/b.rs` -> ['a', 'b'], `src/a/mod.rs` -> ['a'], `src/lib.rs` -> []."""
    rel = os.path.relpath(path, src)[:-3].split(os.sep)
    if rel[-1] == "mod" or (len(rel) == 1 and rel[0] in ("lib", "main")):
        rel = rel[:-1]
    return rel


def group_items(text, start):
    """The top-level items of the `{...}` group opening at text[start]."""
    depth, j = 0, start
    while j < len(text):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                break
        j += 1
    items, cur, depth = [], "", 0
    for ch in text[start + 1:j]:
        if ch == "," and depth == 0:
            items.append(cur.strip())
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    items.append(cur.strip())
    return [i for i in items if i]


def paths_in(code):
    """(line, kind, segments) for each crate::/super::/self:: path in code."""
    found = []
    for m in re.finditer(r"(?<![A-Za-z0-9_$:])((?:crate|self|super)(?:::(?:super))*)::(\{|" + IDENT + ")", code):
        line = code.count("\n", 0, m.start()) + 1
        head = m.group(1).split("::")
        if m.group(2) == "{":
            firsts = [re.match(IDENT, item) for item in group_items(code, m.end(2) - 1)]
            for f in firsts:
                if f and f.group(0) != "self":
                    found.append((line, head, f.group(0)))
        else:
            found.append((line, head, m.group(2)))
    return found


def reexports(root_code):
    """Item name -> top-level module, from the root's `pub use module::...`."""
    names = {}
    for m in re.finditer(r"pub\s+use\s+(?:crate::|self::)?(" + IDENT + r")::([^;]*);", root_code):
        module, rest = m.group(1), m.group(2)
        for name in re.findall(r"(?:\bas\s+)?(" + IDENT + r")\s*(?=,|\}|$)", rest):
            names.setdefault(name, module)
    return names


def crate_graph(crate):
    src = os.path.join(crate, "src")
    files = []
    for dirpath, _, names in os.walk(src):
        if os.path.join(src, "bin") in dirpath:
            continue
        files += [os.path.join(dirpath, n) for n in names if n.endswith(".rs")]
    modules = {module_of(src, f)[0] for f in files if module_of(src, f)}
    exported = {}
    for root in ("lib.rs", "main.rs"):
        p = os.path.join(src, root)
        if os.path.exists(p):
            with open(p, encoding="utf-8") as fh:
                exported.update(reexports(drop_test_items(strip_code(fh.read()))))
    edges = {}
    for f in sorted(files):
        me = module_of(src, f)
        if not me:
            continue  # the crate root: the map
        with open(f, encoding="utf-8") as fh:
            code = drop_test_items(strip_code(fh.read()))
        for line, head, first in paths_in(code):
            if head[0] == "crate":
                base = []
            elif head[0] == "self":
                base = list(me)
            else:
                base = list(me)[: max(0, len(me) - len(head))]
            if base:
                target = base[0]
            elif first in modules:
                target = first
            elif first in exported and exported[first] in modules:
                target = exported[first]
            else:
                continue  # an item of the root itself, or a macro's
            if target != me[0]:
                edges.setdefault((me[0], target), []).append(f"{f}:{line}")
    return modules, edges


def circles(nodes, edges):
    """Strongly connected components with more than one node (Tarjan)."""
    succ = {n: sorted({b for (a, b) in edges if a == n}) for n in nodes}
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in succ.get(v, []):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


sys.setrecursionlimit(10000)
failed = False
for crate in crates:
    if not os.path.isdir(os.path.join(crate, "src")):
        continue
    nodes, edges = crate_graph(crate)
    found = circles(nodes, edges)
    if dot:
        name = crate.replace("/", "_").replace("-", "_")
        print(f"digraph {name} {{")
        for n in sorted(nodes):
            print(f'  "{n}";')
        for (a, b), where in sorted(edges.items()):
            print(f'  "{a}" -> "{b}" [label="{len(where)}"];')
        print("}")
        continue
    print(f"{crate}: {len(nodes)} modules, {len(edges)} arrows, "
          f"{'no circle' if not found else str(len(found)) + ' circle(s)'}")
    for (a, b), where in sorted(edges.items()):
        print(f"  {a} -> {b}  ({len(where)}: {where[0]}{' ...' if len(where) > 1 else ''})")
    for comp in found:
        failed = True
        print(f"  CIRCLE among {', '.join(comp)}:", file=sys.stderr)
        for (a, b), where in sorted(edges.items()):
            if a in comp and b in comp:
                print(f"    {a} -> {b}: {', '.join(where)}", file=sys.stderr)
if failed:
    print("import-graph check FAILED: a crate's modules import each other in a circle "
          "(a module and its submodules are one node); break it by moving the shared piece "
          "to a module both can import", file=sys.stderr)
    sys.exit(1)
if not dot:
    print("import-graph check passed: no circle among any crate's modules")
PY
