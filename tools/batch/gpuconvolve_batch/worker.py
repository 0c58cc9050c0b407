"""The task of one file, run by a Ray worker: runs the job's command into a
temporary file in the output directory and renames it to the output when
the command succeeded, so that an output that exists is complete."""
from __future__ import annotations

import contextlib
import ctypes
import os
import re
import signal
import socket
import subprocess
import tempfile
import threading
import time
from typing import IO, Any, Callable

import ray

from .files import open_part, shown
from .jobs import OUTPUT, Job

PROGRESS_INTERVAL = 0.5          # seconds between frame counts sent to the driver
LOG_LINES = 20                   # lines of a failed command's output kept

# gpuconvolve-batch-run: gpuconvolve-batch-run: blur: active-algorithm = ...
# edge-energy:           edge-energy: sobel-x: separable on cpu (2 threads)
_ALGORITHM = (re.compile(r"^gpuconvolve-batch-run: (.+): active-algorithm = (.+)$"),
              re.compile(r"^edge-energy: (sobel-[xy]): (.+)$"))
# the line that says what went wrong, from either program
_ERROR = re.compile(r": error from |^gpuconvolve-batch-run: error: ")


class JobFailed(Exception):
    """The command failed; the message says how, with its own error line."""


def where() -> dict[str, Any]:
    """This worker's node and GPUs, for the report."""
    context = ray.get_runtime_context()
    return {
        "node": {"ip": ray.util.get_node_ip_address(), "hostname": socket.gethostname(),
                 "id": context.get_node_id()},
        "gpus": [str(g) for g in ray.get_gpu_ids()],
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
    }


def run_job(job: Job, progress: Any) -> dict[str, Any]:
    """Body of the Ray task. Returns what the report says about the file."""
    place = where()
    try:
        attempt = ray.get(progress.started.remote(job.index, place))
    except Exception:                    # progress is not worth failing a file for
        attempt = 0
    started = time.monotonic()
    try:
        _check_paths(job, place)
        # locked while this process has it open (files.py): closed only below
        temp, fd = open_part(job.output)
        try:
            frames, algorithms = _execute(job, temp, fd, progress,
                                          kill=job.test_kill and attempt == 1)
            _check_not_input(job)
            os.replace(temp, job.output)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
        finally:
            os.close(fd)
    except Exception as e:
        # for the driver's note on the retry (Ray's own is a traceback)
        progress.failed.remote(job.index, attempt, (str(e) or type(e).__name__).splitlines()[0])
        raise
    return {**place, "frames": frames, "algorithms": algorithms,
            "seconds": round(time.monotonic() - started, 3), "attempt": attempt}


def _check_paths(job: Job, place: dict[str, Any]) -> None:
    for path in (job.input, os.path.dirname(job.output)):
        if not os.path.exists(path):
            node = place["node"]
            raise JobFailed(f"{shown(path)} does not exist on {node['hostname']} ({node['ip']}): "
                            "inputs and the output directory must be at the same path on "
                            "every node")


def _check_not_input(job: Job) -> None:
    """Right before the rename: the driver checked that the output is no
    input, but a link or a mount made since could have made it one."""
    for path in job.guards:
        try:
            same = os.path.samefile(job.output, path)
        except OSError:                  # either is missing: not the same
            continue
        if same:
            raise JobFailed(f"{shown(job.output)} is now the input {shown(path)} (the same file, "
                            "through a link or a mount made during the batch); not replaced")


def _execute(job: Job, temp: str, fd: int, progress: Any,
             kill: bool) -> tuple[int | None, dict[str, str]]:
    argv = job.command(temp)
    env = {**os.environ, **job.env}
    csv_on_stdout = job.kind == "edge-energy"
    with tempfile.TemporaryFile() as log:
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE if csv_on_stdout else log,
                                    stderr=log, env=env, preexec_fn=_die_with_parent())
        except OSError as e:
            raise JobFailed(f"cannot run {shown(argv[0])}: {e.strerror}") from None
        timer = _watchdog(proc, job.timeout)
        try:
            frames = None
            if csv_on_stdout:
                # through `fd`: closing another descriptor of the file would
                # drop its lock
                with open(fd, "wb", closefd=False) as out:
                    frames = _copy_csv(proc.stdout, out,
                                       lambda n: progress.frames.remote(job.index, n), kill)
            elif kill:
                _kill_self_after(proc, 0.5)
            status = proc.wait()
        finally:
            timer.cancel()
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        lines = _read_log(log)
    if timer.fired:
        raise JobFailed(f"{os.path.basename(argv[0])} ran past --timeout {job.timeout:g} s")
    if status != 0:
        raise JobFailed(_failure(argv[0], status, lines))
    if not os.path.exists(temp):
        raise JobFailed(f"the pipeline removed {OUTPUT}")
    # on disk before the rename makes it the output (fsync writes the file's
    # data whichever descriptor wrote it)
    os.fsync(fd)
    return frames, _algorithms(lines)


def _read_log(log: IO[bytes], head: int = 256 * 1024, tail: int = 64 * 1024) -> list[str]:
    """The command's output: its start (where the algorithms are named) and
    its end (where the error is), however long a verbose pipeline ran."""
    size = log.seek(0, os.SEEK_END)
    log.seek(0)
    if size <= head + tail:
        data = log.read()
    else:
        data = log.read(head) + b"\n...\n"
        log.seek(size - tail)
        data += log.read()
    return data.decode("utf-8", "replace").splitlines()


def _copy_csv(stdout: IO[bytes], out: IO[bytes], report: Callable[[int], Any],
              kill: bool) -> int:
    """Copies the CSV, counting the lines after the header as frames."""
    frames = -1
    last = 0.0
    for line in stdout:
        out.write(line)
        frames += 1
        now = time.monotonic()
        if now - last >= PROGRESS_INTERVAL:
            report(max(frames, 0))
            last = now
        if kill and frames >= 1:
            out.flush()          # leave a half-written temporary file behind
            os.kill(os.getpid(), signal.SIGKILL)
    frames = max(frames, 0)
    report(frames)
    return frames


def _kill_self_after(proc: subprocess.Popen, seconds: float) -> None:
    """Test hook for pipeline jobs: dies mid-run, or right after the command
    when it is quicker than that."""
    try:
        proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        pass
    os.kill(os.getpid(), signal.SIGKILL)


class _Watchdog(threading.Timer):
    fired = False

    def run(self) -> None:
        self.finished.wait(self.interval)
        if not self.finished.is_set():
            self.fired = True
            self.function(*self.args, **self.kwargs)


def _watchdog(proc: subprocess.Popen, timeout: float | None) -> _Watchdog:
    timer = _Watchdog(timeout if timeout else 0, proc.kill)
    timer.daemon = True
    if timeout:
        timer.start()
    return timer


def _die_with_parent() -> Callable[[], None]:
    """A preexec_fn that makes the command die with its worker: a worker that
    is killed must not leave a command writing on."""
    libc = ctypes.CDLL(None, use_errno=True)      # loaded before the fork
    parent = os.getpid()
    pr_set_pdeathsig = 1

    def preexec() -> None:
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL)
        if os.getppid() != parent:                # the worker died already
            os._exit(1)
    return preexec


def _failure(program: str, status: int, lines: list[str]) -> str:
    """One line: how the command ended, and its own error line."""
    how = (f"killed by signal {-status}" if status < 0 else f"exited with status {status}")
    reason = next((l for l in lines if _ERROR.search(l)), None)
    if reason is None:
        reason = next((l for l in reversed(lines) if l.strip()), "no output")
    tail = "\n".join(lines[-LOG_LINES:])
    return f"{os.path.basename(program)} {how}: {reason.strip()}\n{tail}"


def _algorithms(lines: list[str]) -> dict[str, str]:
    """What each gpuconvolve element ran: backend and algorithm."""
    found: dict[str, str] = {}
    for line in lines:
        for pattern in _ALGORITHM:
            m = pattern.search(line)
            if m and m.group(2) != "(not running)":
                found[m.group(1)] = m.group(2).strip()
    return found
