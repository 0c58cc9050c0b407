# SPDX-License-Identifier: LGPL-2.1-or-later
"""The warm worker's client: one `gpuconvolve-batch-run serve` process a
GPU, started once and sent the jobs of its files, several at once
(batch-serve.c has the protocol).

Messages both ways are items, key then value, each a 32-bit little-endian
length and its bytes, after a count of items. A path is sent as its bytes,
never put into text."""
from __future__ import annotations

import ctypes
import os
import queue
import re
import signal
import struct
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import IO, Callable, Iterable

Items = list[tuple[bytes, bytes]]

READY_TIMEOUT = 300.0            # seconds a worker may take to load (nvcodec opens GPUs)
# A job stops itself at its --timeout; a worker that has not answered this
# many seconds later is killed (a state change that blocks is past any
# timeout the job could check) and started again for the next job.
TIMEOUT_GRACE = 5.0
LOG_LINES = 20                   # lines of a failed job's output kept
# the line of a job's output that says what went wrong
ERROR_LINE = re.compile(r": error from |^gpuconvolve-batch-run: error: ")


class WorkerLost(Exception):
    """The worker process ended (or broke the protocol) during a job.
    `shared`: the jobs it was running then (this one included); `culprit`:
    True where this job's --timeout had it killed, False where another
    job's did, None where nobody knows (a crash, a kill from outside)."""

    def __init__(self, message: str, shared: int = 1, culprit: bool | None = None) -> None:
        super().__init__(message)
        self.shared = shared
        self.culprit = culprit


def _bytes(value: str | bytes | int | float) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return os.fsencode(value)       # a path's own bytes
    return repr(value).encode()


def encode(items: Iterable[tuple[str | bytes, str | bytes | int | float]]) -> bytes:
    flat = [_bytes(x) for pair in items for x in pair]
    out = [struct.pack("<I", len(flat))]
    for item in flat:
        out += [struct.pack("<I", len(item)), item]
    return b"".join(out)


def _read_exact(stream: IO[bytes], n: int) -> bytes | None:
    data = b""
    while len(data) < n:
        chunk = stream.read(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def read_message(stream: IO[bytes]) -> Items | None:
    """The next message, or None where the stream ends (or breaks off)."""
    head = _read_exact(stream, 4)
    if head is None:
        return None
    count, = struct.unpack("<I", head)
    flat = []
    for _ in range(count):
        size = _read_exact(stream, 4)
        item = _read_exact(stream, struct.unpack("<I", size)[0]) if size else None
        if item is None:
            return None
        flat.append(item)
    return list(zip(flat[0::2], flat[1::2]))


def value(items: Items, key: str, default: str | None = None) -> str | None:
    for k, v in items:
        if k == key.encode():
            return v.decode("utf-8", "replace")
    return default


@dataclass
class Result:
    """A job's answer."""
    status: int
    frames: int | None
    timed_out: bool
    seconds: float
    no_video: bool = False       # failed, and the input has streams but no video
    algorithms: dict[str, str] = field(default_factory=dict)
    log: list[str] = field(default_factory=list)


def die_with_parent() -> Callable[[], None]:
    """A preexec_fn that makes the worker die with the process that started
    it (SIGKILL when its parent thread ends): a lost Ray worker must not
    leave a pipeline writing on."""
    libc = ctypes.CDLL(None, use_errno=True)      # loaded before the fork
    parent = os.getpid()
    pr_set_pdeathsig = 1

    def preexec() -> None:
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL)
        if os.getppid() != parent:                # the parent died already
            os._exit(1)
    return preexec


class Worker:
    """A `gpuconvolve-batch-run serve` process: start-up (GStreamer, the
    registry, the plugins, the CUDA context) is paid once; then it runs the
    jobs sent to it, several at once, each in a thread of its own there. A
    thread here reads its replies and hands each to the job it names."""

    def __init__(self, runner: str, env: dict[str, str]) -> None:
        self.started_at = time.time()
        self._t0 = time.monotonic()
        # its own stderr (start-up, and what no job's thread printed): the
        # jobs' output goes into their replies
        self._stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([runner, "serve"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self._stderr,
                                     env=env, preexec_fn=die_with_parent())
        self.pid = self.proc.pid
        self.startup_seconds: float | None = None
        self.jobs = 0
        self._lock = threading.Lock()          # the fields below, and writes
        self._ready_lock = threading.Lock()
        self._waiting: dict[str, queue.SimpleQueue] = {}
        self._lost: str | None = None
        self._lost_with = 0                    # jobs running when it ended
        self._killed_for: str | None = None    # the job whose --timeout killed it

    def wait_ready(self, timeout: float = READY_TIMEOUT) -> float:
        """Seconds it took to load; WorkerLost where it did not."""
        with self._ready_lock:
            if self.startup_seconds is not None:
                return self.startup_seconds
            if self._lost:
                raise WorkerLost(f"the worker did not start: {self._lost}")
            timer = threading.Timer(timeout, self.kill)
            timer.daemon = True
            timer.start()
            try:
                message = read_message(self.proc.stdout)
            finally:
                timer.cancel()
            if message is None or value(message, "reply") != "ready":
                self._lost = self._end_text()
                raise WorkerLost(f"the worker did not start: {self._lost}")
            self.startup_seconds = round(time.monotonic() - self._t0, 3)
            threading.Thread(target=self._read_replies, daemon=True).start()
            return self.startup_seconds

    def _read_replies(self) -> None:
        while (message := read_message(self.proc.stdout)) is not None:
            with self._lock:
                waiting = self._waiting.get(value(message, "id", ""))
            if waiting is not None:
                waiting.put(message)
        lost = self._end_text()
        with self._lock:
            self._lost = lost
            self._lost_with = len(self._waiting)
            for waiting in self._waiting.values():
                waiting.put(None)

    def run(self, request: Items, timeout: float | None,
            on_progress: Callable[[int], None]) -> Result:
        """Sends one job (its id unique among those running) and waits for
        its result; WorkerLost where the worker ended first (killed,
        crashed, or past --timeout)."""
        job_id = next((v for k, v in request if k in ("id", b"id")), "")
        job_id = job_id.decode() if isinstance(job_id, bytes) else str(job_id)
        replies: queue.SimpleQueue = queue.SimpleQueue()
        with self._lock:
            if self._lost:
                raise WorkerLost(f"the worker {self._lost}", 1)
            self._waiting[job_id] = replies
            self.jobs += 1
        watchdog = _Watchdog(timeout + TIMEOUT_GRACE if timeout else None,
                             lambda: self._kill_for(job_id))
        try:
            with self._lock:
                self.proc.stdin.write(encode(request))
                self.proc.stdin.flush()
            while True:
                message = replies.get()
                if message is None:
                    if watchdog.fired:
                        raise WorkerLost(f"the job did not stop at --timeout {timeout:g} s; "
                                         "its worker was killed (and is started again)",
                                         self._lost_with, True)
                    if self._killed_for is not None:
                        raise WorkerLost("its worker was killed: another of its files did not "
                                         "stop at --timeout", self._lost_with, False)
                    raise WorkerLost(f"the worker {self._lost}", self._lost_with)
                kind = value(message, "reply")
                if kind == "progress":
                    on_progress(int(value(message, "frames", "0")))
                elif kind == "result":
                    return _result(message)
        except OSError:                  # (a pipe the worker closed by ending)
            raise WorkerLost(f"the worker {self._end_text()}") from None
        finally:
            watchdog.cancel()
            with self._lock:
                self._waiting.pop(job_id, None)

    def _kill_for(self, job_id: str) -> None:
        with self._lock:
            if self._killed_for is None:
                self._killed_for = job_id
        self.kill()

    def _end_text(self) -> str:
        """How the process ended, with the end of its own stderr."""
        try:
            status = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return "stopped answering"
        how = (f"was killed by signal {signal.Signals(-status).name}" if status < 0
               else f"exited with status {status}")
        self._stderr.seek(0)
        lines = [l for l in self._stderr.read().decode("utf-8", "replace").splitlines()
                 if l.strip()]
        return how + (f": {lines[-1].strip()}" if lines else "")

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None and not self._lost

    @property
    def running(self) -> int:
        with self._lock:
            return len(self._waiting)

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.kill()
            except ProcessLookupError:
                pass

    def close(self) -> None:
        """Ends it: the end of its input, then a kill where it lingers."""
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self.kill()
            self.proc.wait()
        self.proc.stdout.close()
        self._stderr.close()


def _result(message: Items) -> Result:
    elements = [v.decode("utf-8", "replace") for k, v in message if k == b"element"]
    algorithms = [v.decode("utf-8", "replace") for k, v in message if k == b"algorithm"]
    frames = value(message, "frames")
    return Result(status=int(value(message, "status", "1")),
                  frames=int(frames) if frames is not None else None,
                  timed_out=value(message, "timed-out") == "1",
                  no_video=value(message, "no-video") == "1",
                  seconds=float(value(message, "seconds", "0")),
                  algorithms=dict(zip(elements, algorithms)),
                  log=(value(message, "log") or "").splitlines())


class _Watchdog:
    """Calls `action` once `seconds` have passed, unless cancelled first."""

    def __init__(self, seconds: float | None, action: Callable[[], None]) -> None:
        self.fired = False
        self._timer = None
        if seconds:
            def fire() -> None:
                self.fired = True
                action()
            self._timer = threading.Timer(seconds, fire)
            self._timer.daemon = True
            self._timer.start()

    def cancel(self) -> None:
        if self._timer:
            self._timer.cancel()
