#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The structure of the plugin and the engine, read from their sources.

  scripts/structure.py circles        files that call or include each other in
                                      a loop (exit 1 when there is one)
  scripts/structure.py walk           what a filter change runs, from the
                                      property setter and the frame that
                                      applies it: functions, files, and the
                                      calls from one file to another
  scripts/structure.py sizes [N]      files of gst/ and cuda/ over N lines
                                      (default 800; exit 1 when there is one)

It reads C, C++ and CUDA sources of gst/ and cuda/ as text: a function is a
name at the start of a line followed by '(' (GStreamer's style puts the
return type on the line before), a call is a name followed by '(' inside a
function's body, and a call through a table of functions (`b->submit (...)`)
counts as a call to every function that one of the engine's tables
(`GcvBackend gcv_cpu_backend = { .submit = cpu_submit, ... }`) puts there.
Includes of a header count as arrows to the source file of its name. No build is needed; the numbers are a reader's map, not a
compiler's.
"""
import collections
import os
import re
import sys

ROOTS = ("gst", "cuda")
EXTS = (".c", ".h", ".cu", ".cuh")
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "defined",
            "G_N_ELEMENTS", "static_assert", "decltype", "alignof"}
FUNC_DEF = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*\(", re.M)
CALL = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")
MEMBER_CALL = re.compile(r"(?:->|\.)\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)?\s*\(")
MEMBER_INIT = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)\s*=\s*&?\s*([A-Za-z_][A-Za-z0-9_]*)")
# the engine's tables of functions (a backend's, say): `Gcv... name = { ... };`
TABLE = re.compile(r"\bGcv[A-Za-z]+\s+[A-Za-z_][A-Za-z0-9_]*\s*=\s*\{(.*?)\};", re.S)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
STRING = re.compile(r'"(?:\\.|[^"\\])*"')


def sources(top):
    for root in ROOTS:
        for d, _, files in os.walk(os.path.join(top, root)):
            for f in sorted(files):
                if f.endswith(EXTS):
                    yield os.path.relpath(os.path.join(d, f), top)


MACRO = re.compile(r"^[ \t]*#[ \t]*define(?:[^\n]*\\\n)*[^\n]*", re.M)


def strip(text):
    """The code without comments, strings and macro definitions (whose
    bodies are no functions of their own)."""
    return MACRO.sub("", STRING.sub('""', COMMENT.sub(" ", text)))


def bodies(text):
    """(name, is_static, body) of each function defined in the text."""
    for m in FUNC_DEF.finditer(text):
        i = text.find("{", m.end())
        semi = text.find(";", m.end())
        if i < 0 or (0 <= semi < i):
            continue                    # a declaration
        depth, j = 0, i
        while j < len(text):
            if text[j] == "{":
                depth += 1
            elif text[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        head = text[max(text.rfind(";", 0, m.start()),
                        text.rfind("}", 0, m.start())) + 1:m.start()]
        yield m.group(1), re.search(r"\bstatic\b", head) is not None, text[i:j + 1]


class House:
    def __init__(self, top):
        self.files = list(sources(top))
        self.text = {f: strip(open(os.path.join(top, f), errors="replace").read())
                     for f in self.files}
        self.defined = collections.defaultdict(set)      # function -> files
        self.local = set()                                # (file, static fn)
        self.calls = {}                                   # (file, fn) -> names
        self.members = collections.defaultdict(set)       # member -> (file, fn)
        for f, t in self.text.items():
            for name, static, body in bodies(t):
                if name in KEYWORDS:
                    continue
                self.defined[name].add(f)
                if static:
                    self.local.add((f, name))
                names = {c for c in CALL.findall(body) if c not in KEYWORDS}
                names |= {"->" + c for c in MEMBER_CALL.findall(body)}
                self.calls[(f, name)] = names
            for table in TABLE.findall(t):
                for member, fn in MEMBER_INIT.findall(table):
                    self.members[member].add((f, fn))

    def callees(self, f, name):
        for c in self.calls.get((f, name), ()):
            if c.startswith("->"):
                # through a table: whatever fills that member, static or not
                for table_file, t in self.members.get(c[2:], ()):
                    for g in self.defined.get(t, ()):
                        if g == table_file or (g, t) not in self.local:
                            yield g, t
                continue
            for t in (c,):
                # a static function of the caller's file, else the others'
                # that are not static
                if (f, t) in self.local:
                    yield f, t
                    continue
                for g in self.defined.get(t, ()):
                    if (g, t) not in self.local:
                        yield g, t

    def file_arrows(self):
        arrows = collections.defaultdict(set)
        for (f, name) in self.calls:
            for g, _ in self.callees(f, name):
                if g != f:
                    arrows[f].add(g)
        by_base = collections.defaultdict(list)
        for f in self.files:
            by_base[os.path.basename(f)].append(f)
        for f, t in self.text.items():
            for inc in INCLUDE.findall(open(f, errors="replace").read()):
                for g in by_base.get(os.path.basename(inc), ()):
                    if g != f and not g.endswith((".h", ".cuh")):
                        arrows[f].add(g)
        # a header stands for the source file of its name
        return arrows


def strongly_connected(nodes, arrows):
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in arrows.get(v, ()):
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

    sys.setrecursionlimit(10000)
    for v in nodes:
        if v not in index:
            visit(v)
    return out


def circles(house):
    found = strongly_connected(house.files, house.file_arrows())
    for comp in found:
        print("circle: " + " <-> ".join(comp))
    print(f"{len(found)} circle(s) among {len(house.files)} files")
    return 1 if found else 0


# Where a filter change starts: the setter, and the frame that applies it
# (GstBaseTransform's before_transform, which builds the filter and hands it
# to the plan, where the backend settles what runs).
WALK_FROM = ("gst_gpu_convolve_set_property", "gst_gpu_convolve_before_transform")


def part_of(path):
    """The part of the code a file belongs to: its folder."""
    return os.path.dirname(path) + "/"


def walk(house):
    """Everything a filter change runs: the functions of gst/ and cuda/ that
    the start reaches, the files they are in, and the calls from one file
    to another among them."""
    start = [v for v in house.calls if v[1] in WALK_FROM]
    reach, todo = set(start), list(start)
    while todo:
        v = todo.pop()
        for w in house.callees(*v):
            if w not in reach:
                reach.add(w)
                todo.append(w)
    files = collections.Counter(f for f, _ in reach)
    handoffs = collections.Counter()
    for v in reach:
        for w in house.callees(*v):
            if w in reach and w[0] != v[0]:
                handoffs[tuple(sorted((v[0], w[0])))] += 1
    for f, n in sorted(files.items()):
        print(f"{n:4d}  {f}")
    for (a, b), n in handoffs.most_common(5):
        print(f"      {n:3d} calls between {a} and {b}")
    # the same calls between the engine's parts (its folders), in the
    # direction they go: who hands the change to whom
    parts = collections.Counter()
    for v in reach:
        for w in house.callees(*v):
            if w in reach and part_of(v[0]) != part_of(w[0]):
                parts[(part_of(v[0]), part_of(w[0]))] += 1
    for (a, b), n in sorted(parts.items()):
        print(f"      {n:3d} calls from {a} to {b}")
    print(f"a filter change: {len(reach)} functions in {len(files)} files, "
          f"{sum(handoffs.values())} calls from one file to another")
    return 0


def sizes(house, limit):
    over = []
    for f in house.files:
        n = sum(1 for _ in open(f, errors="replace"))
        if n > limit:
            over.append((n, f))
    for n, f in sorted(over, reverse=True):
        print(f"{n:6d}  {f}")
    print(f"{len(over)} file(s) over {limit} lines")
    return 1 if over else 0


def main(argv):
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.chdir(top)
    house = House(top)
    what = argv[1] if len(argv) > 1 else "circles"
    if what == "circles":
        return circles(house)
    if what == "walk":
        return walk(house)
    if what == "sizes":
        return sizes(house, int(argv[2]) if len(argv) > 2 else 800)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
