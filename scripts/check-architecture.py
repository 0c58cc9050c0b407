#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Checks that docs/architecture.md is true to the tree.

  scripts/check-architecture.py [SOURCE_ROOT]

- Every file the document names in backticks (a name with a source, script,
  document or data extension, `families/tiled.cu` or `gcv-plan.c`) is a
  file of the tree: some tracked file's path ends with it. A name with `*`
  must match at least one file.
- Every folder of the tree that holds code (C, CUDA, Python, shell, meson
  or CI files) is named: the folder itself (`cuda/gpu/`, a path ending in
  it) or a file in it.

The tree is what git tracks, or every file under SOURCE_ROOT where it is
not a git checkout (a release tarball). Exits 1 and names each problem.
"""
import fnmatch
import os
import re
import subprocess
import sys

DOC = "docs/architecture.md"
FILE_EXTS = (".c", ".h", ".cu", ".cuh", ".py", ".sh", ".md", ".build",
             ".prs", ".tbl", ".txt", ".json")
CODE_EXTS = (".c", ".h", ".cu", ".cuh", ".py", ".sh", ".build")
CODE_NAMES = ("run", "meson.build", "gpuconvolve-batch")


def tree_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files"], check=True,
                             capture_output=True, text=True).stdout
        return [f for f in out.splitlines() if f]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for d, dirs, names in os.walk(root):
            dirs[:] = [x for x in dirs if not x.startswith(("build", "."))
                       or x == ".ci"]
            for n in names:
                files.append(os.path.relpath(os.path.join(d, n), root))
        return files


def names_in(text):
    return set(re.findall(r"`([^`\s]+)`", text))


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else \
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    files = tree_files(root)
    with open(os.path.join(root, DOC), encoding="utf-8") as f:
        names = names_in(f.read())
    problems = []

    named_files = set()
    for name in sorted(names):
        if not name.endswith(FILE_EXTS) or name.startswith("."):
            continue
        if "*" in name:
            hits = [p for p in files if fnmatch.fnmatch(p, "*" + name)]
        else:
            hits = [p for p in files if p == name or p.endswith("/" + name)]
        if not hits:
            problems.append(f"{DOC} names `{name}`, which is no file of the tree")
        named_files.update(hits)

    named_dirs = {n.rstrip("/") for n in names if n.endswith("/")}
    folders = sorted({os.path.dirname(p) for p in files
                      if os.path.dirname(p)
                      and (p.endswith(CODE_EXTS)
                           or os.path.basename(p) in CODE_NAMES)})
    for folder in folders:
        if any(folder == d or folder.endswith("/" + d) for d in named_dirs):
            continue
        if any(os.path.dirname(p) == folder for p in named_files):
            continue
        problems.append(f"{DOC} does not name the folder {folder}/ "
                        "(or any file in it)")

    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"{DOC}: {len(named_files)} files named, all present; "
          f"{len(folders)} folders of code, all named")
    return 0


if __name__ == "__main__":
    sys.exit(main())
