# SPDX-License-Identifier: LGPL-2.1-or-later
"""The outcome of a batch: a record per file, the JSON report and the
summary a person reads."""
from __future__ import annotations

import json
import os
import sys
import tempfile
from typing import Any, Mapping, TextIO

from .files import FileKey, key, shown

# 2: slots of warm workers: files' start and end times, the workers, Ray's
# start-up apart, frames/s over the files' time; 3: one worker process a GPU
# (a node) running its files side by side (docs/batch.md)
REPORT_VERSION = 3


def new_record(input_path: str, output: str) -> dict[str, Any]:
    """A file's entry of the report, before its task ends."""
    return {"input": input_path, "output": output, "status": "pending", "frames": None,
            "seconds": None, "started": None, "ended": None, "attempts": 0, "node": None,
            "gpus": [], "cuda_visible_devices": None, "worker": None, "algorithms": {},
            "error": None, "log": [], "failed_attempts": []}


def settle_cancelled(records: list[dict[str, Any]], before: Mapping[int, FileKey | None],
                     counts_frames: bool) -> None:
    """A file marked cancelled whose output was renamed into place anyway
    (its worker finished it in the moment it was stopped) is done: an output
    that is not the one there before the batch (`before`: index -> what
    was there) was published whole by its attempt. Its frames are the
    CSV's lines after the header; its times are unknown."""
    for index, was in before.items():
        record = records[index]
        now = key(record["output"])
        if record["status"] != "cancelled" or now is None or now == was:
            continue
        frames = None
        if counts_frames:
            try:
                with open(record["output"], "rb") as f:
                    frames = max(sum(1 for _ in f) - 1, 0)
            except OSError:
                pass
        record.update(status="done", frames=frames)


def totals(records: list[dict[str, Any]], seconds: float, counts_frames: bool,
           workers: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts by status; frames per second over the files' time: from the
    first file's start to the last file's end (failed attempts included),
    which leaves out Ray's start-up and the workers' (reported apart)."""
    count = {status: sum(r["status"] == status for r in records)
             for status in ("done", "failed", "skipped", "cancelled")}
    # pipeline jobs count no frames: None, not 0
    frames = (sum(r["frames"] or 0 for r in records if r["status"] == "done")
              if counts_frames else None)
    files_seconds = _files_seconds(records)
    rate = round(frames / files_seconds, 2) if frames is not None and files_seconds > 0 else None
    starts = [s for w in workers for s in w["starts"]]
    startups = [s["startup_seconds"] for s in starts if s["startup_seconds"] is not None]
    return {"files": len(records), **count, "frames": frames, "seconds": round(seconds, 3),
            "files_seconds": round(files_seconds, 3), "frames_per_second": rate,
            "workers": len(workers), "slots": sum(w.get("files", 1) for w in workers),
            "worker_starts": len(starts),
            "worker_startup_seconds": round(max(startups), 3) if startups else None}


def _files_seconds(records: list[dict[str, Any]]) -> float:
    """From the first attempt's start to the last one's end, done or failed."""
    spans = [(r["started"], r["ended"]) for r in records if r["started"] is not None]
    spans += [(a["started"], a["ended"]) for r in records for a in r["failed_attempts"]
              if a.get("started") is not None]
    if not spans:
        return 0.0
    return max(end for _, end in spans) - min(start for start, _ in spans)


def by_node(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Files (those done and failed, and all it ran: `files`) and frames
    of each node that ran files."""
    nodes: dict[str, dict[str, Any]] = {}
    for r in records:
        if r["node"] and r["status"] in ("done", "failed"):
            entry = nodes.setdefault(r["node"]["id"], {**r["node"], "files": 0, "done": 0,
                                                       "failed": 0, "frames": 0})
            entry[r["status"]] += 1
            entry["files"] += 1
            entry["frames"] += r["frames"] or 0
    return list(nodes.values())


class WouldReplaceInput(Exception):
    """The report's path has become an input since the batch started."""


def write_json(path: str, report: dict[str, Any], keep: Mapping[FileKey, str] = {}) -> None:
    """Written whole or not at all, like the outputs, and never over a file
    of `keep` (the inputs), checked again right before the rename."""
    directory = os.path.dirname(path) or "."
    fd, temp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(path)}.",
                                suffix=".part")
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)        # mkstemp's 0600 is for secrets
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2)
            f.write("\n")
            f.flush()                    # a write error (a full disk) raises here,
            os.fsync(f.fileno())         # or here: the report is not published
        try:
            st = os.stat(path)
        except FileNotFoundError:
            st = None
        if st is not None and (st.st_dev, st.st_ino) in keep:
            raise WouldReplaceInput(f"it is now the input {shown(keep[st.st_dev, st.st_ino])}")
        os.replace(temp, path)
    except BaseException:
        os.unlink(temp)
        raise


def _where(r: dict[str, Any]) -> str:
    if not r["node"]:
        return ""
    gpu = ",".join(r["gpus"]) if r["gpus"] else "-"
    return f"node {r['node']['ip']} ({r['node']['hostname']}) gpu {gpu}"


def print_summary(records: list[dict[str, Any]], total: dict[str, Any], report_path: str | None,
                  stream: TextIO = sys.stdout) -> None:
    """A line per file, a line per node, the workers and the totals;
    `report_path` None: the report was not written."""
    nodes = by_node(records)
    names = [shown(os.path.basename(r["input"])) for r in records]
    width = max((len(n) for n in names), default=0)
    for r, name in zip(records, names):
        name = name.ljust(width)
        status = r["status"].ljust(9) + " "
        if r["status"] == "done":
            parts = [f"{r['frames']} frames" if r["frames"] is not None else "",
                     f"{r['seconds']:.1f} s" if r["seconds"] is not None else "", _where(r)]
            print(f"{status}{name}  {', '.join(p for p in parts if p)}"
                  f"{', attempt ' + str(r['attempts']) if r['attempts'] > 1 else ''}",
                  file=stream)
        elif r["status"] == "failed":
            print(f"{status}{name}  after {r['attempts']} attempt(s), last on {_where(r)}: "
                  f"{r['error']}", file=stream)
        else:
            print(f"{status}{name.rstrip()}", file=stream)
    rate = total["frames_per_second"]
    frames = (f"{total['frames']} frames{f' ({rate:.1f} frames/s)' if rate is not None else ''}, "
              if total["frames"] is not None else "")
    cancelled = f", {total['cancelled']} cancelled" if total["cancelled"] else ""
    where = f"report {shown(report_path)}" if report_path else "no report"
    for node in nodes:
        print(f"gpuconvolve-batch: node {node['ip']} ({node['hostname']}): {node['files']} "
              f"file(s), {node['done']} done, {node['failed']} failed"
              f"{', ' + str(node['frames']) + ' frames' if total['frames'] is not None else ''}",
              file=stream)
    starts = total["worker_starts"]
    print(f"gpuconvolve-batch: {total['workers']} worker(s), {starts} worker "
          f"start-up{'s' if starts != 1 else ''}"
          + (f" (the longest {total['worker_startup_seconds']:.1f} s)"
             if total["worker_startup_seconds"] is not None else ""), file=stream)
    print(f"gpuconvolve-batch: {total['files']} file{'s' if total['files'] != 1 else ''}: "
          f"{total['done']} done, {total['failed']} failed, {total['skipped']} skipped{cancelled}; "
          f"{frames}{total['seconds']:.1f} s in all; {where}", file=stream)
