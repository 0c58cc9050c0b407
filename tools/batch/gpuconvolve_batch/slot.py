# SPDX-License-Identifier: LGPL-2.1-or-later
"""A worker of the batch: a Ray actor that keeps one warm worker process
(`gpuconvolve-batch-run serve`, serve.py) and runs the files the driver
hands it, several at once (its share's `files`), side by side in that one
process. Ray places it with a whole GPU (one worker a GPU, in one CUDA
context) or, without GPUs, on its node, and sets CUDA_VISIBLE_DEVICES for
it, which the worker process inherits. Where the process ends, the next
file starts it again.

Each file is written into a temporary output in the output directory
(files.py: made with O_EXCL and locked by this process while the file runs)
and renamed to the output when the job succeeded, so that an output that
exists is complete."""
from __future__ import annotations

import concurrent.futures
import contextlib
import os
import signal
import socket
import threading
import time
from typing import Any

import ray

from . import serve
from .files import open_part, shown
from .jobs import OUTPUT, Job

PROGRESS_INTERVAL = 0.5          # seconds between frame counts sent to the driver


class JobFailed(Exception):
    """The file failed; the message says how, with the job's own error line.
    For the report: `worker`, the worker's starts so far; `times`, when
    the attempt started and ended (seconds since the epoch). `lost`: where
    the worker process ended under it, (jobs it was running then, culprit:
    serve.WorkerLost's)."""

    def __init__(self, message: str, worker: dict[str, Any] | None = None,
                 times: tuple[float, float] | None = None,
                 lost: tuple[int, bool | None] | None = None) -> None:
        super().__init__(message, worker, times, lost)
        self.message = message
        self.worker = worker
        self.times = times
        self.lost = lost

    def __str__(self) -> str:
        return self.message


def where() -> dict[str, Any]:
    """This process's node and GPUs, for the report."""
    context = ray.get_runtime_context()
    return {
        "node": {"ip": ray.util.get_node_ip_address(), "hostname": socket.gethostname(),
                 "id": context.get_node_id()},
        "gpus": [str(g) for g in ray.get_gpu_ids()],
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
    }


class Slot:
    """The actor's class (made remote by the driver, with the worker's GPU
    and CPU shares, and as many threads as files it runs at once)."""

    def __init__(self, index: int, runner: str, env: dict[str, str], progress: Any) -> None:
        self.index = index
        self.runner = runner
        self.env = {**os.environ, **env}
        self.progress = progress
        self.place = where()
        self.worker: serve.Worker | None = None
        self.starts: list[dict[str, Any]] = []
        self.start_error: str | None = None
        self._lock = threading.Lock()
        # Worker processes are started from this one thread, which lives as
        # long as the actor: a process dies with the thread that started it
        # (serve.die_with_parent), and the threads of the calls do not last.
        self._starter = concurrent.futures.ThreadPoolExecutor(1)
        # at once, so that the worker loads while Ray starts the others
        self._start()

    def info(self) -> dict[str, Any]:
        return {**self.place, "starts": self.starts}

    def ready(self) -> dict[str, Any]:
        """Once the worker process has loaded (or failed to): where this
        runs, and its starts."""
        with contextlib.suppress(JobFailed):
            self._ready_worker()
        return self.info()

    def _start(self) -> None:
        try:
            self.worker = self._starter.submit(serve.Worker, self.runner, self.env).result()
        except OSError as e:
            self.worker = None
            self.start_error = f"cannot run {shown(self.runner)}: {e.strerror or e}"
            return
        self.starts.append({"pid": self.worker.pid, "started": round(self.worker.started_at, 3),
                            "startup_seconds": None})

    def _ready_worker(self) -> serve.Worker:
        """The warm worker, started again where the last one ended (by the
        first of the files that finds it so)."""
        with self._lock:
            if self.worker is not None and not self.worker.alive:
                old = self.worker
                self.worker = None
                old.kill()
                self._starter.submit(old.close)
            if self.worker is None:
                self._start()
            worker = self.worker
            start = self.starts[-1] if self.starts else None
        if worker is None:
            raise JobFailed(self.start_error or "no worker", self._worker_info())
        try:
            seconds = worker.wait_ready()
        except serve.WorkerLost as e:
            raise JobFailed(str(e), self._worker_info()) from None
        start["startup_seconds"] = seconds
        return worker

    def _worker_info(self, worker: serve.Worker | None = None,
                     warm: bool | None = None) -> dict[str, Any]:
        info: dict[str, Any] = {"worker": self.index, "starts": self.starts}
        worker = worker or self.worker
        if worker is not None:
            info.update(pid=worker.pid, startup_seconds=worker.startup_seconds)
        if warm is not None:
            info["warm"] = warm
        return info

    def run(self, job: Job, attempt: int) -> dict[str, Any]:
        """One attempt at one file (while others run beside it). Returns
        what the report says about it; raises JobFailed when it failed."""
        started = time.time()
        worker = None
        try:
            self._check_paths(job)
            worker = self._ready_worker()
            warm = worker.jobs > 0
            started = time.time()    # the file's own time, after any start-up
            # locked while this process has it open (files.py): closed only below
            temp, fd = open_part(job.output)
            try:
                result = self._execute(worker, job, temp, attempt)
                if not os.path.exists(temp):
                    raise JobFailed(f"the pipeline removed {OUTPUT}")
                self._publish(job, temp, fd)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temp)
                raise
            finally:
                os.close(fd)
        except JobFailed as e:
            raise JobFailed(e.message, self._worker_info(worker),
                            (round(started, 3), round(time.time(), 3)), e.lost) from None
        return {**self.place, "frames": result.frames, "algorithms": result.algorithms,
                "started": round(started, 3), "ended": round(time.time(), 3),
                "seconds": round(time.time() - started, 3), "attempt": attempt,
                "worker": self._worker_info(worker, warm)}

    def _execute(self, worker: serve.Worker, job: Job, temp: str,
                 attempt: int) -> serve.Result:
        kill = job.test_kill and attempt == 1
        last = [0.0]

        def on_progress(frames: int) -> None:
            now = time.monotonic()
            if now - last[0] >= PROGRESS_INTERVAL or frames == 1:
                last[0] = now
                self.progress.frames.remote(job.index, frames)
            if kill and frames >= 1:
                # test hook: this process dies mid-file, its worker (and
                # the worker's other files) with it
                os.kill(os.getpid(), signal.SIGKILL)

        if kill and job.kind == "pipeline":
            _kill_self_later(0.5)
        try:
            result = worker.run(job.request(temp), job.timeout, on_progress)
        except serve.WorkerLost as e:
            raise JobFailed(str(e), lost=(e.shared, e.culprit)) from None
        if kill:                         # (a job quicker than the hook)
            os.kill(os.getpid(), signal.SIGKILL)
        if result.frames is not None:
            self.progress.frames.remote(job.index, result.frames)
        if result.timed_out:
            raise JobFailed(f"{job.program} ran past --timeout {job.timeout:g} s "
                            "(stopped; its worker goes on)")
        if result.status != 0:
            raise JobFailed(_failure(job.program, result.log,
                                     f"no video stream in {shown(job.input)}"
                                     if result.no_video else None))
        return result

    def _publish(self, job: Job, temp: str, fd: int) -> None:
        """Renames the finished temporary output into place, once it is on
        disk (fsync writes the file's data whichever process wrote it, and
        reports what could not be written: a full disk fails the file)."""
        try:
            os.fsync(fd)
        except OSError as e:
            raise JobFailed(f"cannot write {shown(job.output)}: {e.strerror}") from None
        self._check_not_input(job)
        try:
            os.replace(temp, job.output)
        except OSError as e:
            raise JobFailed(f"cannot rename the temporary output to {shown(job.output)}: "
                            f"{e.strerror}") from None

    def _check_paths(self, job: Job) -> None:
        for path in (job.input, os.path.dirname(job.output)):
            if not os.path.exists(path):
                node = self.place["node"]
                raise JobFailed(f"{shown(path)} does not exist on {node['hostname']} "
                                f"({node['ip']}): inputs and the output directory must be at "
                                "the same path on every node")

    @staticmethod
    def _check_not_input(job: Job) -> None:
        """Right before the rename: the driver checked that the output is no
        input, but a link or a mount made since could have made it one."""
        for path in job.guards:
            try:
                same = os.path.samefile(job.output, path)
            except OSError:              # either is missing: not the same
                continue
            if same:
                raise JobFailed(f"{shown(job.output)} is now the input {shown(path)} (the same "
                                "file, through a link or a mount made during the batch); not "
                                "replaced")


def _kill_self_later(seconds: float) -> None:
    """Test hook for pipeline jobs: this process dies mid-file."""
    import threading
    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGKILL))
    timer.daemon = True
    timer.start()


def _failure(program: str, lines: list[str], reason: str | None = None) -> str:
    """One line, the reason (by default the job's own error line), then
    the end of its output."""
    if reason is None:
        reason = next((l for l in lines if serve.ERROR_LINE.search(l)), None)
    if reason is None:
        reason = next((l for l in reversed(lines) if l.strip()), "no output")
    tail = "\n".join(lines[-serve.LOG_LINES:])
    return f"{program} failed: {reason.strip()}\n{tail}"
