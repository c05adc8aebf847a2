#!/usr/bin/env bash
# The import graph of each workspace crate, at two granularities, and a check that it has no
# circle.
#
# Read textually from the sources (no compiler). Comments, doc comments, strings, macro
# bodies' `$crate` paths and #[cfg(test)] items (and files only a #[cfg(test)] `mod` declares)
# are left out.
#
# Module view (`--modules`, checked on every crate): every `crate::a::...`, `super::...` and
# `self::...` path in code (`use crate::{a::X, b::Y}` groups followed into) is an arrow from
# the module of the file to the module it names. A top-level module of the crate and all its
# submodules are one node (`session/mod.rs`, `session/run.rs` and `session/stats.rs` are all
# `session`), so `control.rs` <-> `session/mod.rs` is a circle, and so is `pool.rs` ->
# `session::stats` while `session` imports `pool`. Arrows inside a node are not drawn. The
# crate root (lib.rs, main.rs) is the crate's map, not a node; a path to an item it
# re-exports (`crate::Error` for `pub use error::Error`) counts as an arrow to the module the
# item comes from.
#
# File view (`--files`): every file is a node, the crate root too. An arrow goes from file A
# to file B when A names an item that lives in B: a `crate::`/`self::`/`super::` path, a path
# through a submodule A declares (`executor::Executor` in a `mod.rs` with `mod executor;`),
# each leaf of a `use` tree (a leaf importing a module, `use super::ops;`, is no arrow itself:
# each path through it, `ops::Hold`, is). A path is followed module by module to the file of
# the module that holds the named item; a name that module only imports or re-exports (`use`,
# `pub use`, private or not) is followed on to the file where the item is defined. So:
# - a parent declaring `mod child;` is not an arrow; its `pub use child::X` (a re-export) is
#   an arrow parent -> child, downwards, as is any use the parent makes of a child's items;
# - a child naming `super::X` where the parent only re-exports X from a sibling is an arrow
#   to that sibling, not to the parent: a parent that is only a map (declarations and
#   re-exports) is never imported;
# - a child naming an item *defined* in its parent (or in any file above it: the crate root,
#   a `mod.rs`, a `foo.rs` declaring `foo/`) is "a file importing a module above it": the
#   parent already reaches down to the child (it declares it, and usually uses or re-exports
#   it), so the arrow back up is a circle the tree hides. The file check refuses such an
#   arrow as it refuses circles: move the item down into a file of its own that both the
#   parent and the child import.
# The file check passes for a crate when its file graph has no circle and no upward arrow.
# Limits: glob imports (`use x::*`) and macro-generated paths are not followed, and an inline
# module (`mod m { .. }`, other than a test module) is read as part of its file.
#
# Usage: scripts/import-graph.sh [--modules | --files] [--dot] [CRATE_DIR...]
#   (no CRATE_DIR: every member of the workspace)
#   (neither mode: the module check and the file check on every crate, enforced. This is
#    what scripts/check-seams.sh runs.)
#   --modules  the module view only
#   --files    the file view only, enforced on every crate given
#   --dot      print each crate's graph in Graphviz dot (arrows labelled with how many paths)
# Prints the arrows of each crate and every circle (and upward arrow) with the file:line of
# each arrow in it; exits 1 if any enforced check fails, 0 otherwise.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec python3 - "$@" <<'PY'
import os
import re
import sys
import tomllib

args = sys.argv[1:]
dot = "--dot" in args
mode = "files" if "--files" in args else "modules" if "--modules" in args else "default"
crates = [a.rstrip("/") for a in args if a not in ("--dot", "--files", "--modules")]
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
    """Blanks every item marked #[cfg(test)] or #[cfg(all(test, ..))] (test code is not part of
    the graph)."""
    out, i = [], 0
    for m in re.finditer(r"#\[cfg\((?:test|all\(test\b[^\]]*)\)\]", code):
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



# ---- the file view -------------------------------------------------------------------------

USE_TOKEN = re.compile(r"::|[{},*]|" + IDENT)


def parse_use_tree(text):
    """[(segments, alias)] for each leaf of a use tree (`a::{b, c::d as e, self}`); a glob
    leaf has segment '*'; `self` in a group names the group's prefix."""
    toks = USE_TOKEN.findall(text)
    pos = [0]

    def tree(prefix):
        segs = list(prefix)
        while pos[0] < len(toks):
            t = toks[pos[0]]
            if t == "{":
                pos[0] += 1
                out = []
                while pos[0] < len(toks) and toks[pos[0]] != "}":
                    if toks[pos[0]] == ",":
                        pos[0] += 1
                        continue
                    out += tree(segs)
                pos[0] += 1
                return out
            if t == "*":
                pos[0] += 1
                return [(segs + ["*"], None)]
            if t == "::":
                pos[0] += 1
                continue
            if t in (",", "}"):
                break
            if t == "as":
                pos[0] += 1
                alias = toks[pos[0]] if pos[0] < len(toks) else None
                pos[0] += 1
                return [(segs, alias)]
            segs.append(t)
            pos[0] += 1
        if segs and segs[-1] == "self":
            segs = segs[:-1]
        return [(segs, None)] if segs else []

    return tree([])


def declared_children(code):
    """Names of the file modules a file declares (`mod x;`, any visibility)."""
    return re.findall(r"(?<![A-Za-z0-9_])mod\s+(" + IDENT + r")\s*;", code)


def crate_files(crate):
    """{module path tuple: (file, code)} for every file reachable from the crate's roots
    through `mod x;` declarations not under #[cfg(test)] (a test-only file is left out)."""
    src = os.path.join(crate, "src")
    found = {}

    def load(path):
        with open(path, encoding="utf-8") as fh:
            return drop_test_items(strip_code(fh.read()))

    def walk(modpath, path, is_dir_owner):
        code = load(path)
        found[modpath] = (path, code)
        base = os.path.dirname(path) if is_dir_owner else path[:-3]
        for child in declared_children(code):
            for cand, owner in ((os.path.join(base, child + ".rs"), False),
                                (os.path.join(base, child, "mod.rs"), True)):
                if os.path.exists(cand):
                    walk(modpath + (child,), cand, owner)
                    break

    for root in ("lib.rs", "main.rs"):
        p = os.path.join(src, root)
        if os.path.exists(p):
            # lib.rs and main.rs are two crates: main.rs reaches lib.rs only by the crate name.
            key = () if root == "lib.rs" else ("<main>",)
            walk(key, p, True)
    return found


def absolute(modpath, segs, children):
    """The path `segs`, written in module `modpath`, from the crate root; None if external."""
    if not segs:
        return None
    head = segs[0]
    if head == "crate":
        return tuple(segs[1:]) if modpath[:1] != ("<main>",) else ("<main>",) + tuple(segs[1:])
    if head in ("self", "super"):
        base, i = list(modpath), 0
        if segs[0] == "self":
            i = 1
        while i < len(segs) and segs[i] == "super":
            base = base[:-1]
            i += 1
        return tuple(base) + tuple(segs[i:])
    if head in children:
        return tuple(modpath) + tuple(segs)
    return None


def file_graph(crate):
    files = crate_files(crate)
    imports = {}  # modpath -> {name: absolute path or None (external)}
    uses = {}  # modpath -> [(line, absolute path)]
    rests = {}  # modpath -> (code with use statements blanked, declared children)
    # Pass 1: the use statements of every file (what each name in it stands for).
    for mp, (path, code) in files.items():
        children = set(declared_children(code))
        names, found = {}, []
        blanked = list(code)
        for m in re.finditer(r"(?<![A-Za-z0-9_])use\s+([^;]*);", code):
            line = code.count("\n", 0, m.start()) + 1
            for segs, alias in parse_use_tree(m.group(1)):
                segs = [x for x in segs if x]
                if not segs or segs[0] == "":
                    continue
                target = absolute(mp, segs, children)
                if segs[-1] == "*":
                    if target is not None:
                        found.append((line, target[:-1]))
                    continue
                names[alias or segs[-1]] = target
                if target is not None:
                    found.append((line, target))
            for k in range(m.start(), m.end()):
                if blanked[k] != "\n":
                    blanked[k] = " "
        imports[mp] = names
        uses[mp] = found
        rests[mp] = ("".join(blanked), children)

    def resolve(path, depth=0, whole_module=False):
        """The module path of the file holding the item `path` names (with `whole_module`:
        the module `path` names, or None if it names an item)."""
        cur = ()
        if path[:1] == ("<main>",):
            cur, path = ("<main>",), path[1:]
        for i, seg in enumerate(path):
            if seg in ("self", "super", "crate"):
                return None
            if cur + (seg,) in files:
                cur = cur + (seg,)
                continue
            target = imports.get(cur, {}).get(seg, "missing")
            if target == "missing":
                # Defined here (or a macro's, or unknown: counted here).
                return None if whole_module else cur
            if target is None or depth > 20:
                return None  # from another crate
            return resolve(tuple(target) + tuple(path[i + 1:]), depth + 1, whole_module)
        return cur

    # A use that imports a module (`use super::ops;`, `use super::ops::{self, ..}`) draws no
    # arrow by itself: each path through it in the code (`ops::Hold`) does, to the file of the
    # item it names (the module's file only for items defined there).
    for mp in files:
        aliases = {}
        for name, target in imports[mp].items():
            if target is not None:
                module = resolve(tuple(target), whole_module=True)
                if module is not None and module in files:
                    aliases[name] = module
        uses[mp] = [(line, t) for (line, t) in uses[mp]
                    if not (t and resolve(tuple(t), whole_module=True) in aliases.values()
                            and t[-1] in aliases)]
        rest, children = rests[mp]
        heads = ["crate", "self", "super"] + sorted(children) + sorted(aliases)
        pattern = "|".join(re.escape(h) for h in heads)
        for m in re.finditer(r"(?<![A-Za-z0-9_$:])((?:" + pattern + r")(?:::" + IDENT + r")+)", rest):
            segs = m.group(1).split("::")
            if segs[0] in aliases and segs[0] not in children:
                target = tuple(aliases[segs[0]]) + tuple(segs[1:])
            else:
                target = absolute(mp, segs, children)
            if target is not None:
                uses[mp].append((rest.count("\n", 0, m.start()) + 1, target))

    edges = {}
    for mp, found in uses.items():
        me = files[mp][0]
        for line, target in found:
            held = resolve(target)
            if held is None or held not in files or held == mp:
                continue
            where = edges.setdefault((me, files[held][0]), [])
            if f"{me}:{line}" not in where:
                where.append(f"{me}:{line}")
    upward = {}
    for (a, b), where in edges.items():
        ma = next(k for k, v in files.items() if v[0] == a)
        mb = next(k for k, v in files.items() if v[0] == b)
        if len(mb) < len(ma) and ma[:len(mb)] == mb:
            upward[(a, b)] = where
    return {v[0] for v in files.values()}, edges, upward


def print_dot(name, nodes, edges):
    """A graph in Graphviz dot, each arrow labelled with how many paths draw it."""
    name = name.replace("/", "_").replace("-", "_")
    print(f"digraph {name} {{")
    for n in sorted(nodes):
        print(f'  "{n}";')
    for (a, b), where in sorted(edges.items()):
        print(f'  "{a}" -> "{b}" [label="{len(where)}"];')
    print("}")


def check_files(crate, enforce):
    nodes, edges, upward = file_graph(crate)
    found = circles(nodes, edges)
    if dot:
        print_dot(crate + "_files", nodes, edges)
        return True
    bad = bool(found or upward)
    print(f"{crate} (files): {len(nodes)} files, {len(edges)} arrows, "
          f"{len(found)} circle(s), {len(upward)} upward arrow(s)")
    for (a, b), where in sorted(edges.items()):
        print(f"  {a} -> {b}  ({len(where)}: {where[0]}{' ...' if len(where) > 1 else ''})")
    out = sys.stderr if enforce else sys.stdout
    for comp in found:
        print(f"  CIRCLE among {len(comp)} files of {crate}: {', '.join(comp)}", file=out)
        for (a, b), where in sorted(edges.items()):
            if a in comp and b in comp:
                print(f"    {a} -> {b}: {', '.join(where)}", file=out)
    for (a, b), where in sorted(upward.items()):
        print(f"  UPWARD {a} -> {b} (imports an item defined in a module above it): "
              f"{', '.join(where)}", file=out)
    return not bad


sys.setrecursionlimit(10000)
failed = False
files_failed = False
for crate in crates:
    if not os.path.isdir(os.path.join(crate, "src")):
        continue
    if mode == "files":
        files_failed |= not check_files(crate, enforce=True)
        continue
    nodes, edges = crate_graph(crate)
    found = circles(nodes, edges)
    if dot:
        print_dot(crate, nodes, edges)
    else:
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
    if mode == "default":
        files_failed |= not check_files(crate, enforce=True)
if failed:
    print("import-graph check FAILED: a crate's modules import each other in a circle "
          "(a module and its submodules are one node); break it by moving the shared piece "
          "to a module both can import", file=sys.stderr)
if files_failed:
    print("import-graph check FAILED: a crate's files import each other in a circle, or a file "
          "imports an item defined in a module above it; move the shared item down into a file "
          "both can import", file=sys.stderr)
if failed or files_failed:
    sys.exit(1)
if not dot:
    if mode == "files":
        print("import-graph check passed: no circle and no upward arrow among the files of "
              + ", ".join(crates))
    elif mode == "modules":
        print("import-graph check passed: no circle among any crate's modules")
    else:
        print("import-graph check passed: no circle among any crate's modules, and no circle "
              "and no upward arrow among any crate's files")
PY
