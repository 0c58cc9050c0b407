# SPDX-License-Identifier: LGPL-2.1-or-later
"""The driver's side of the workers: makes their actors (slot.py), hands
the next file to a worker with a free place, retries a failed file,
replaces a worker whose actor was lost (its files retried), and fills in
the report's records.

A worker runs several files in one process: where that process (or its
actor) ends under several files, which of them caused it is not known.
Those attempts then do not count against --retries, and each of those
files runs its next attempt alone in a worker, where a crash is its own.
An attempt that ran alone, or whose --timeout had the process killed,
counts; one whose process another file's --timeout killed does not."""
from __future__ import annotations

import collections
import contextlib
from dataclasses import dataclass, field
from typing import Any

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from .files import shown
from .jobs import Job
from .progress import ProgressLine
from .shares import Share, WorkerShare
from .signals import StopSignals
from .slot import JobFailed, Slot

POLL = 0.5                       # seconds between progress updates
LOST = "its worker or node was lost"
# a worker whose actor dies this often before it was ready is given up
UNPLACED_TRIES = 3


@dataclass
class _Worker:
    index: int
    share: WorkerShare
    actor: Any = None
    incarnation: int = 0
    ready_ref: Any = None
    place: dict[str, Any] | None = None
    last_place: dict[str, Any] | None = None     # where an earlier actor ran
    # the running attempts: object ref -> (job, attempt number)
    running: dict[Any, tuple[Job, int]] = field(default_factory=dict)
    alone: bool = False          # runs a file that must run alone
    # worker starts per actor incarnation, as the actor last told them
    starts: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    jobs: int = 0
    # actors that died before they were ready, and why the last did
    lost_unplaced: int = 0
    dead: str | None = None


class Scheduler:
    def __init__(self, jobs: list[Job], records: list[dict[str, Any]], share: Share,
                 runner: str, env: dict[str, str], retries: int, progress: Any,
                 line: ProgressLine, stop: StopSignals) -> None:
        self.queue = collections.deque(jobs)
        self.records = records
        self.runner = runner
        self.env = env
        self.retries = retries
        self.progress = progress
        self.line = line
        self.stop = stop
        self.workers = [_Worker(i, s) for i, s in enumerate(share.workers)]
        self.last_worker: dict[int, int] = {}    # job index: worker of its last failure
        self.counted: dict[int, int] = {}        # job index: failures counted
        self.alone: set[int] = set()             # job indexes that run alone
        self.finished = sum(r["status"] == "skipped" for r in records)
        self.failed = 0
        self.frames: dict[int, int] = {}

    # ---- workers ------------------------------------------------------

    def _start_worker(self, w: _Worker) -> None:
        w.incarnation += 1
        options: dict[str, Any] = {"num_gpus": w.share.gpus, "num_cpus": w.share.cpus,
                                   "max_restarts": 0, "max_task_retries": 0,
                                   # its files' calls, and ready() and info() beside them
                                   "max_concurrency": w.share.files + 2}
        if w.share.node:
            options["scheduling_strategy"] = NodeAffinitySchedulingStrategy(w.share.node,
                                                                            soft=True)
        w.actor = ray.remote(Slot).options(**options).remote(w.index, self.runner, self.env,
                                                             self.progress)
        w.ready_ref = w.actor.ready.remote()
        w.last_place = w.place or w.last_place
        w.place = None
        w.alone = False

    def _replace_worker(self, w: _Worker) -> None:
        with contextlib.suppress(Exception):
            ray.kill(w.actor, no_restart=True)
        self._start_worker(w)

    def _place(self, w: _Worker) -> dict[str, Any] | None:
        """Where the worker runs, once its process has loaded (None before:
        a worker is handed files only then)."""
        if w.place is not None or w.dead or w.ready_ref is None:
            return w.place
        ready, _ = ray.wait([w.ready_ref], timeout=0)
        if not ready:
            return None
        try:
            info = ray.get(w.ready_ref)
        except Exception as e:
            w.lost_unplaced += 1
            if w.lost_unplaced >= UNPLACED_TRIES:
                w.dead = (str(e).strip().splitlines() or [type(e).__name__])[0]
            else:
                self._replace_worker(w)
            return None
        w.starts[w.incarnation] = info.pop("starts")
        w.place = info
        return w.place

    def stop_workers(self) -> None:
        """Ends every worker (and with each its process); files still
        running are cancelled (their workers ended first: a worker answers
        nothing else while it runs files, but for ready and info)."""
        self._collect_ready()
        for w in self.workers:
            if w.running:
                for job, _ in w.running.values():
                    self.records[job.index]["status"] = "cancelled"
                w.running.clear()
                self._kill(w)
        self._final_starts()
        for w in self.workers:
            self._kill(w)

    @staticmethod
    def _kill(w: _Worker) -> None:
        if w.actor is not None:
            with contextlib.suppress(Exception):
                ray.kill(w.actor, no_restart=True)
            w.actor = None

    def _final_starts(self) -> None:
        """The worker starts of each worker still there, as its actor tells
        them now (one that ran no file started its process too). One not
        ready yet is waited for 5 s at most."""
        refs = {}
        for w in self.workers:
            if w.actor is None or w.dead:
                continue
            refs[w.actor.info.remote() if w.place is not None else w.ready_ref] = w
        with contextlib.suppress(Exception):
            ready, _ = ray.wait(list(refs), num_returns=len(refs), timeout=5)
            for ref in ready:
                w = refs[ref]
                with contextlib.suppress(Exception):
                    info = ray.get(ref)
                    w.starts[w.incarnation] = info.pop("starts")
                    w.place = info

    # ---- the loop -----------------------------------------------------

    def run(self) -> None:
        """Until every file ended or a signal asks to stop."""
        for w in self.workers:
            self._start_worker(w)
        while (self.queue or self._running()) and not self.stop.requested:
            self._hand_out()
            if self.queue and all(w.dead for w in self.workers):
                self._give_up(self.workers[0].dead)
                break
            # a file that ends, or a worker that gets ready
            waiting = [ref for w in self.workers for ref in w.running]
            waiting += [w.ready_ref for w in self.workers
                        if w.place is None and not w.dead and w.ready_ref is not None]
            ended = False
            if waiting:
                ready, _ = ray.wait(waiting, num_returns=1, timeout=POLL)
                ended = bool(ready) and self._collect_ready() > 0
            self._update_line(ended)

    def _running(self) -> int:
        return sum(len(w.running) for w in self.workers)

    def _hand_out(self) -> None:
        for w in self.workers:
            while (self.queue and not w.alone and len(w.running) < w.share.files
                   and self._place(w) is not None):
                job = self._next_job(w)
                if job is None:
                    break
                self.queue.remove(job)
                record = self.records[job.index]
                record["attempts"] += 1
                ref = w.actor.run.remote(job, record["attempts"])
                w.running[ref] = (job, record["attempts"])
                w.alone = job.index in self.alone
                w.jobs += 1

    def _next_job(self, w: _Worker) -> Job | None:
        """The next file for `w`: a retry on another worker where it can; a
        file that must run alone only where nothing else runs."""
        fits = [j for j in self.queue if j.index not in self.alone or not w.running]
        if not fits:
            return None
        return next((j for j in fits if self.last_worker.get(j.index) != w.index), fits[0])

    def _give_up(self, why: str | None) -> None:
        """No worker could start: the files left fail with why."""
        while self.queue:
            job = self.queue.popleft()
            self.records[job.index].update(status="failed",
                                           error=f"no worker could start: {why}", log=[])
            self.finished += 1
            self.failed += 1

    def _collect_ready(self) -> int:
        owner = {ref: w for w in self.workers for ref in w.running}
        if not owner:
            return 0
        try:
            ready, _ = ray.wait(list(owner), num_returns=len(owner), timeout=0)
        except Exception:
            return 0
        for ref in ready:
            if ref in owner[ref].running:        # (not failed with its lost actor)
                self._finish(owner[ref], ref)
        return len(ready)

    def _finish(self, w: _Worker, ref: Any) -> None:
        job, attempt = w.running.pop(ref)
        if not w.running:
            w.alone = False
        record = self.records[job.index]
        try:
            result = ray.get(ref)
        except ray.exceptions.RayTaskError as e:
            cause = getattr(e, "cause", None)
            if isinstance(cause, JobFailed):
                self._note_starts(w, cause.worker)
                shared, culprit = cause.lost or (1, True)
                self._failed(w, job, attempt, str(cause), cause.times,
                             (cause.worker or {}).get("pid"), shared, culprit)
            else:
                text = str(cause if cause is not None else e).strip()
                self._failed(w, job, attempt, f"{type(cause or e).__name__}: {text}")
            return
        except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError,
                ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError,
                ray.exceptions.ObjectLostError):
            # the actor, and with it every file it ran
            lost = [(job, attempt)] + list(w.running.values())
            place = w.place
            w.running.clear()
            self._replace_worker(w)
            for lost_job, lost_attempt in lost:
                self._set_place(self.records[lost_job.index], place)
                self._failed(w, lost_job, lost_attempt, LOST, shared=len(lost), culprit=None)
            return
        self._note_starts(w, result["worker"])
        self._set_place(record, result)
        worker = result["worker"]
        record.update(status="done", frames=result["frames"], seconds=result["seconds"],
                      started=result["started"], ended=result["ended"],
                      algorithms=result["algorithms"],
                      worker={"worker": w.index, "pid": worker.get("pid"),
                              "startup_seconds": worker.get("startup_seconds"),
                              "warm": worker.get("warm")})
        self.frames[job.index] = result["frames"] or 0
        self.finished += 1

    def _note_starts(self, w: _Worker, worker: dict[str, Any] | None) -> None:
        if worker and "starts" in worker:
            w.starts[w.incarnation] = worker["starts"]

    @staticmethod
    def _set_place(record: dict[str, Any], place: dict[str, Any] | None) -> None:
        if place:
            record.update(node=place["node"], gpus=place["gpus"],
                          cuda_visible_devices=place["cuda_visible_devices"])

    def _failed(self, w: _Worker, job: Job, attempt: int, error: str,
                times: tuple[float, float] | None = None, pid: int | None = None,
                shared: int = 1, culprit: bool | None = True) -> None:
        record = self.records[job.index]
        lines = error.strip().splitlines() or [LOST]
        started, ended = times or (None, None)
        # whose fault: see the module's comment
        counts = culprit is True or (culprit is None and shared <= 1)
        record["failed_attempts"].append({"attempt": attempt, "error": lines[0],
                                          "started": started, "ended": ended, "worker": w.index,
                                          "pid": pid, "counted": counts})
        self._set_place(record, w.place)
        self.last_worker[job.index] = w.index
        if culprit is None and not counts:
            self.alone.add(job.index)
        failures = self.counted[job.index] = self.counted.get(job.index, 0) + counts
        if failures <= self.retries and not self.stop.requested:
            why = "" if counts else " (not counted: it shared its worker's end)"
            self.line.note(f"retrying {shown(job.name)} (attempt {attempt + 1}): "
                           f"attempt {attempt} failed{why}: {lines[0]}")
            self.queue.appendleft(job)
            return
        record.update(status="failed", error=lines[0], log=lines[1:])
        self.finished += 1
        self.failed += 1

    def _update_line(self, ended: bool) -> None:
        with contextlib.suppress(Exception):
            self.frames.update(ray.get(self.progress.snapshot.remote(), timeout=5))
        loading = sum(1 for w in self.workers if self._place(w) is None and not w.dead)
        self.line.update(self.finished, self.failed, self._running(), len(self.queue),
                         sum(self.frames.values()), file_ended=ended,
                         starting=(loading, len(self.workers)) if loading else None)

    # ---- the report ---------------------------------------------------

    def report_workers(self) -> list[dict[str, Any]]:
        """Per worker: where it ran, its files at once, its actors and its
        process's starts."""
        out = []
        for w in self.workers:
            place = (w.place or w.last_place
                     or {"node": None, "gpus": [], "cuda_visible_devices": None})
            starts = [s for n in sorted(w.starts) for s in w.starts[n]]
            out.append({"worker": w.index, **place, "files": w.share.files,
                        "actors": w.incarnation, "starts": starts, "jobs": w.jobs})
        return out
