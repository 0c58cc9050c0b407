# SPDX-License-Identifier: LGPL-2.1-or-later
"""The driver's side of the slots: makes the slot actors (slot.py), hands
the next file to whichever slot is free, retries a failed file, replaces
a slot whose actor was lost (its file retried like a failure), and fills in
the report's records."""
from __future__ import annotations

import collections
import contextlib
from dataclasses import dataclass, field
from typing import Any

import ray

from .files import shown
from .jobs import Job
from .progress import ProgressLine
from .shares import SlotShare
from .signals import StopSignals
from .slot import JobFailed, Slot

POLL = 0.5                       # seconds between progress updates
LOST = "its worker or node was lost"
# a slot whose actor dies this often before Ray placed it is given up
UNPLACED_TRIES = 3


@dataclass
class _Slot:
    index: int
    actor: Any = None
    incarnation: int = 0
    place_ref: Any = None
    place: dict[str, Any] | None = None
    # the running attempt: (object ref, job, attempt number)
    busy: tuple[Any, Job, int] | None = None
    # worker starts per actor incarnation, as the actor last told them
    starts: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    jobs: int = 0
    # actors that died before they were placed, and why the last did
    lost_unplaced: int = 0
    dead: str | None = None


class Scheduler:
    def __init__(self, jobs: list[Job], records: list[dict[str, Any]], share: SlotShare,
                 runner: str, env: dict[str, str], retries: int, progress: Any,
                 line: ProgressLine, stop: StopSignals) -> None:
        self.queue = collections.deque(jobs)
        self.records = records
        self.share = share
        self.runner = runner
        self.env = env
        self.retries = retries
        self.progress = progress
        self.line = line
        self.stop = stop
        self.remote = ray.remote(Slot).options(num_gpus=share.gpus, num_cpus=share.cpus,
                                               max_restarts=0, max_task_retries=0)
        self.slots = [_Slot(i) for i in range(share.count)]
        self.last_slot: dict[int, int] = {}      # job index: slot of its last failure
        self.finished = sum(r["status"] == "skipped" for r in records)
        self.failed = 0
        self.frames: dict[int, int] = {}

    # ---- slots --------------------------------------------------------

    def _start_slot(self, slot: _Slot) -> None:
        slot.incarnation += 1
        slot.actor = self.remote.remote(slot.index, self.runner, self.env, self.progress)
        slot.place_ref = slot.actor.info.remote()
        slot.place = None

    def _replace_slot(self, slot: _Slot) -> None:
        with contextlib.suppress(Exception):
            ray.kill(slot.actor, no_restart=True)
        self._start_slot(slot)

    def _place(self, slot: _Slot) -> dict[str, Any] | None:
        """Where the slot runs, once Ray placed its actor (None before: a
        slot is handed files only once it runs somewhere)."""
        if slot.place is not None or slot.dead or slot.place_ref is None:
            return slot.place
        ready, _ = ray.wait([slot.place_ref], timeout=0)
        if not ready:
            return None
        try:
            info = ray.get(slot.place_ref)
        except Exception as e:
            slot.lost_unplaced += 1
            if slot.lost_unplaced >= UNPLACED_TRIES:
                slot.dead = (str(e).strip().splitlines() or [type(e).__name__])[0]
            else:
                self._replace_slot(slot)
            return None
        slot.starts[slot.incarnation] = info.pop("starts")
        slot.place = info
        return slot.place

    def stop_slots(self) -> None:
        """Ends every slot (and with each its worker); files still running
        are cancelled (their slots ended first: a slot answers nothing else
        while it runs a file)."""
        self._collect_ready()
        for slot in self.slots:
            if slot.busy:
                self.records[slot.busy[1].index]["status"] = "cancelled"
                slot.busy = None
                self._kill(slot)
        self._final_starts()
        for slot in self.slots:
            self._kill(slot)

    @staticmethod
    def _kill(slot: _Slot) -> None:
        if slot.actor is not None:
            with contextlib.suppress(Exception):
                ray.kill(slot.actor, no_restart=True)
            slot.actor = None

    def _final_starts(self) -> None:
        """The worker starts of each slot still there, as its actor tells
        them now: a slot that ran no file (one that replaced a lost one, for
        example) started its worker too. A slot that Ray has not placed yet
        is waited for 5 s at most."""
        refs = {}
        for slot in self.slots:
            if slot.actor is None or slot.dead:
                continue
            placed = slot.place is not None
            refs[slot.actor.info.remote() if placed else slot.place_ref] = slot
        with contextlib.suppress(Exception):
            ready, _ = ray.wait(list(refs), num_returns=len(refs), timeout=5)
            for ref in ready:
                slot = refs[ref]
                with contextlib.suppress(Exception):
                    info = ray.get(ref)
                    slot.starts[slot.incarnation] = info.pop("starts")
                    slot.place = info

    # ---- the loop -----------------------------------------------------

    def run(self) -> None:
        """Until every file ended or a signal asks to stop."""
        for slot in self.slots:
            self._start_slot(slot)
        while (self.queue or any(s.busy for s in self.slots)) and not self.stop.requested:
            self._hand_out()
            if self.queue and all(s.dead for s in self.slots):
                self._give_up(self.slots[0].dead)
                break
            # a file that ends, or a slot that Ray places
            waiting = [s.busy[0] for s in self.slots if s.busy]
            waiting += [s.place_ref for s in self.slots
                        if s.place is None and not s.dead and s.place_ref is not None]
            ended = False
            if waiting:
                ready, _ = ray.wait(waiting, num_returns=1, timeout=POLL)
                ended = bool(ready) and self._collect_ready() > 0
            self._update_line(ended)

    def _hand_out(self) -> None:
        for slot in self.slots:
            if slot.busy or not self.queue or self._place(slot) is None:
                continue
            # a retry goes to another slot where it can
            job = next((j for j in self.queue if self.last_slot.get(j.index) != slot.index),
                       self.queue[0])
            self.queue.remove(job)
            record = self.records[job.index]
            record["attempts"] += 1
            ref = slot.actor.run.remote(job, record["attempts"])
            slot.busy = (ref, job, record["attempts"])
            slot.jobs += 1

    def _give_up(self, why: str | None) -> None:
        """No slot could start: the files left fail with why."""
        while self.queue:
            job = self.queue.popleft()
            self.records[job.index].update(status="failed",
                                           error=f"no slot could start: {why}", log=[])
            self.finished += 1
            self.failed += 1

    def _collect_ready(self) -> int:
        busy = {s.busy[0]: s for s in self.slots if s.busy}
        if not busy:
            return 0
        try:
            ready, _ = ray.wait(list(busy), num_returns=len(busy), timeout=0)
        except Exception:
            return 0
        for ref in ready:
            self._finish(busy[ref])
        return len(ready)

    def _finish(self, slot: _Slot) -> None:
        ref, job, attempt = slot.busy
        slot.busy = None
        record = self.records[job.index]
        try:
            result = ray.get(ref)
        except ray.exceptions.RayTaskError as e:
            cause = getattr(e, "cause", None)
            if isinstance(cause, JobFailed):
                self._note_starts(slot, cause.worker)
                self._failed(slot, job, attempt, str(cause), cause.times,
                             (cause.worker or {}).get("pid"))
            else:
                text = str(cause if cause is not None else e).strip()
                self._failed(slot, job, attempt, f"{type(cause or e).__name__}: {text}")
            return
        except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError,
                ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError,
                ray.exceptions.ObjectLostError):
            self._set_place(record, slot.place)
            self._replace_slot(slot)
            self._failed(slot, job, attempt, LOST)
            return
        self._note_starts(slot, result["worker"])
        self._set_place(record, result)
        worker = result["worker"]
        record.update(status="done", frames=result["frames"], seconds=result["seconds"],
                      started=result["started"], ended=result["ended"],
                      algorithms=result["algorithms"],
                      worker={"slot": slot.index, "pid": worker.get("pid"),
                              "startup_seconds": worker.get("startup_seconds"),
                              "warm": worker.get("warm")})
        self.frames[job.index] = result["frames"] or 0
        self.finished += 1

    def _note_starts(self, slot: _Slot, worker: dict[str, Any] | None) -> None:
        if worker and "starts" in worker:
            slot.starts[slot.incarnation] = worker["starts"]

    @staticmethod
    def _set_place(record: dict[str, Any], place: dict[str, Any] | None) -> None:
        if place:
            record.update(node=place["node"], gpus=place["gpus"],
                          cuda_visible_devices=place["cuda_visible_devices"])

    def _failed(self, slot: _Slot, job: Job, attempt: int, error: str,
                times: tuple[float, float] | None = None, pid: int | None = None) -> None:
        record = self.records[job.index]
        lines = error.strip().splitlines() or [LOST]
        started, ended = times or (None, None)
        record["failed_attempts"].append({"attempt": attempt, "error": lines[0],
                                          "started": started, "ended": ended, "slot": slot.index,
                                          "pid": pid})
        self._set_place(record, slot.place)
        self.last_slot[job.index] = slot.index
        if attempt <= self.retries and not self.stop.requested:
            self.line.note(f"retrying {shown(job.name)} (attempt {attempt + 1}): "
                           f"attempt {attempt} failed: {lines[0]}")
            self.queue.appendleft(job)
            return
        record.update(status="failed", error=lines[0], log=lines[1:])
        self.finished += 1
        self.failed += 1

    def _update_line(self, ended: bool) -> None:
        with contextlib.suppress(Exception):
            self.frames.update(ray.get(self.progress.snapshot.remote(), timeout=5))
        running = sum(1 for s in self.slots if s.busy)
        self.line.update(self.finished, self.failed, running, len(self.queue),
                         sum(self.frames.values()), file_ended=ended)

    # ---- the report ---------------------------------------------------

    def workers(self) -> list[dict[str, Any]]:
        """Per slot: where it ran, its actors and its worker starts."""
        out = []
        for slot in self.slots:
            place = slot.place or {"node": None, "gpus": [], "cuda_visible_devices": None}
            starts = [s for n in sorted(slot.starts) for s in slot.starts[n]]
            out.append({"slot": slot.index, **place, "actors": slot.incarnation,
                        "starts": starts, "jobs": slot.jobs})
        return out
