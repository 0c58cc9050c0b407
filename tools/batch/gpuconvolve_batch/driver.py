"""Runs a batch on Ray: one task per file, retried when it fails, with a
progress line while they run and the report at the end."""
from __future__ import annotations

import collections
import contextlib
import ctypes
import datetime
import logging
import os
import re
import signal
import socket
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import ray
import ray.cloudpickle

from . import files, report, worker
from .files import FileKey, shown
from .jobs import EdgeEnergy, Job, Pipeline, UsageError
from .progress import Progress, ProgressLine
from .signals import Interrupted, StopSignals

POLL = 0.5                       # seconds between progress updates
LOST = "its worker or node was lost"
# Ray's notice of each retry: the task's traceback, on stdout
_RETRY_NOTICE = re.compile(r"retries remaining|will be retried")


@dataclass
class Plan:
    """A checked command line."""
    spec: EdgeEnergy | Pipeline
    inputs: list[str]
    outputs: list[str]
    output_dir: str
    report_path: str
    command: list[str]
    address: str | None = None
    gpus_per_task: float | None = None
    cpus_per_task: float = 1.0
    retries: int = 2
    timeout: float | None = None
    resume: bool = False
    env: dict[str, str] = field(default_factory=dict)
    test_kill: str | None = None
    show_progress: bool = True
    # the inputs by what they are (files.key), on this machine
    input_keys: dict[FileKey, str] = field(default_factory=dict)


def run(plan: Plan, stop: StopSignals) -> int:
    records = [report.new_record(i, o) for i, o in zip(plan.inputs, plan.outputs)]
    todo = []
    for index, record in enumerate(records):
        # (the plan checked that an existing output is no input)
        if plan.resume and os.path.exists(record["output"]):
            record["status"] = "skipped"
        else:
            todo.append(index)
    # the temporary outputs of attempts whose worker or driver was killed
    removed = _remove_parts(plan, wait=0)
    if removed:
        print(f"gpuconvolve-batch: removed {removed} temporary output(s) (.NAME.XXXXXXXX.part) "
              "left by an earlier run", file=sys.stderr)

    started_at = datetime.datetime.now(datetime.timezone.utc)
    started = time.monotonic()
    ray_info: dict[str, Any] = {}
    task_seconds = 0.0
    try:
        stop.check()                     # a signal while the arguments were checked
        if todo:
            _adopt_orphans()
            try:
                with stop.breakable():   # Ray half started would leave processes
                    ray_info = _connect(plan.address)
            except Exception as e:
                _explain_connect_failure(plan.address, e)
                return 2
            stop.install()
            stop.check()
            gpus = _gpus_per_task(plan, ray_info)
            ray_info.update(gpus_per_task=gpus, cpus_per_task=plan.cpus_per_task)
            jobs = _jobs(plan, todo, gpus == 0)
            task_seconds = _execute(plan, jobs, records, gpus, stop)
    except Interrupted:
        pass
    except UsageError as e:
        print(f"gpuconvolve-batch: {e}", file=sys.stderr)
        return 2
    finally:
        _stop_ray()
        _end_leftovers()
        _remove_parts(plan, wait=5)
    seconds = time.monotonic() - started
    if stop.requested:
        for record in records:
            if record["status"] == "pending":
                record["status"] = "cancelled"

    total = report.totals(records, seconds, task_seconds,
                          counts_frames=plan.spec.kind == "edge-energy")
    try:
        report.write_json(plan.report_path, {
            "version": report.REPORT_VERSION,
            "command": plan.command,
            "started": started_at.isoformat(timespec="seconds"),
            "seconds": round(seconds, 3),
            "job": _describe(plan),
            "ray": ray_info,
            "totals": total,
            "nodes": report.by_node(records),
            "files": records,
        }, keep=plan.input_keys)
        written = True
    except (OSError, report.WouldReplaceInput) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        print(f"gpuconvolve-batch: cannot write the report {shown(plan.report_path)}: {reason}",
              file=sys.stderr)
        written = False
    report.print_summary(records, total, plan.report_path if written else None)
    if stop.requested:
        return stop.status
    return 1 if total["failed"] or total["cancelled"] or not written else 0


def _stop_ray() -> None:
    """Ends the driver's Ray: the instance of its own with every process it
    started, or its connection to a cluster (whose tasks of this batch Ray
    then ends). Nothing where Ray did not start."""
    try:
        ray.shutdown()
    except Exception as e:               # the report still comes
        print(f"gpuconvolve-batch: stopping Ray: {e}", file=sys.stderr)


_PR_SET_CHILD_SUBREAPER = 36


def _adopt_orphans() -> None:
    """Makes this process the one that its descendants are handed to when
    their parent dies (a Linux subreaper), so that _end_leftovers finds
    them: the agents of a raylet that was killed outlive it by a minute."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _children() -> dict[int, str]:
    """This process's children (pid: state), from /proc."""
    me = os.getpid()
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == me:
            found[int(entry)] = fields[0].decode()
    return found


def _end_leftovers(grace: float = 3.0) -> None:
    """Ends what is left under this process once Ray is shut down: nothing,
    unless starting Ray was cut short (a second signal) and left processes
    that Ray's own shutdown does not know. SIGTERM, then SIGKILL after
    `grace` seconds; each reaped."""
    deadline = time.monotonic() + grace
    signum = signal.SIGTERM
    while True:
        alive = []
        for pid, state in _children().items():
            if state == "Z":
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, os.WNOHANG)
            else:
                alive.append(pid)
        if not alive:
            return
        if signum == signal.SIGKILL and time.monotonic() > deadline + grace:
            return                       # (unkillable: not worth hanging for)
        for pid in alive:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signum)
        time.sleep(0.1)
        if time.monotonic() > deadline:
            signum = signal.SIGKILL


def _connect(address: str | None) -> dict[str, Any]:
    _adapt_ray()
    # Worker output is captured per file; Ray's own INFO lines are noise here.
    quiet: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False}
    if address:
        _check_reachable(address)
        ray.init(address=address, **quiet)
    else:
        # "local": always a new instance, never a cluster found on this machine
        ray.init(address="local", include_dashboard=False, **quiet)
    _route_ray_notices()
    # The tasks' code travels with them, so that nodes need only Ray itself.
    ray.cloudpickle.register_pickle_by_value(sys.modules[__package__])
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    return {"address": address or "embedded", "gcs_address": ray.get_runtime_context().gcs_address,
            "version": ray.__version__, "nodes": len(nodes),
            "gpus": ray.cluster_resources().get("GPU", 0)}


def _adapt_ray() -> None:
    """Changes to Ray's internals (the pinned version's) for the driver:
    ray.init sets SIGTERM handlers that leave at once (sys.exit), wherever
    the driver is, and a C++ one that prints a stack trace, where the
    batch's own (signals.py) stops it cleanly; and it sends the driver's
    command line as UTF-8, which a path that is not fails (the bytes are
    written as escapes instead)."""
    import ray._private.ray_constants as ray_constants
    import ray._private.utils as ray_utils
    ray_utils.set_sigterm_handler = lambda handler: None
    ray_constants.RAY_DISABLE_FAILURE_SIGNAL_HANDLER = True
    entrypoint = ray_utils.get_entrypoint_name
    if not getattr(entrypoint, "escapes", False):
        def escaped() -> str:
            return entrypoint().encode("utf-8", "backslashreplace").decode("utf-8")
        escaped.escapes = True
        ray_utils.get_entrypoint_name = escaped


def _check_reachable(address: str) -> None:
    """Fails at once where nothing listens at HOST:PORT; Ray itself would
    try again for many minutes. Other forms (auto, ray://) are Ray's to read."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or "/" in host:
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=10).close()
    except OSError as e:
        raise ConnectionError(f"nothing answers at {address} ({e.strerror or e})") from None


def _explain_connect_failure(address: str | None, error: Exception) -> None:
    reason = str(error).splitlines()[0] if str(error) else type(error).__name__
    if not address:
        print(f"gpuconvolve-batch: cannot start Ray: {reason}", file=sys.stderr)
        return
    print(f"gpuconvolve-batch: cannot join the Ray cluster at {address}: {reason}\n"
          "gpuconvolve-batch: is it running and reachable from here, with this Ray and Python "
          "version? A cluster with token authentication needs RAY_AUTH_MODE=token and its "
          "token (RAY_AUTH_TOKEN, or ~/.ray/auth_token) here as on its nodes; see docs/batch.md",
          file=sys.stderr)


def _route_ray_notices() -> None:
    """Ray prints a notice with the task's traceback on stdout each time it
    retries a task; the driver notes retries itself (with the file's name),
    so those are dropped, and Ray's other notices go to stderr. This reaches
    into Ray's internals (the pinned version's); without them Ray prints as
    it does."""
    import ray._private.worker as ray_worker
    original = getattr(ray_worker, "print_to_stdstream", None)
    if original is None:
        return

    def route(data: dict, ignore_prefix: bool) -> None:
        lines = [l for l in data.get("lines", []) if not _RETRY_NOTICE.search(l)]
        if lines:
            original({**data, "lines": lines, "is_err": True}, ignore_prefix)
    ray_worker.print_to_stdstream = route


def _gpus_per_task(plan: Plan, ray_info: dict[str, Any]) -> float:
    available = ray_info["gpus"]
    if plan.gpus_per_task is None:
        return 1.0 if available > 0 else 0.0
    if plan.gpus_per_task > 0 and available == 0:
        if not plan.address:
            raise UsageError(f"--gpus-per-task {plan.gpus_per_task:g}: Ray sees no GPU on this "
                             "machine; use --gpus-per-task 0 (the CPU backend)")
        print("gpuconvolve-batch: the cluster has no GPU now; the tasks wait until a node "
              "with GPUs joins", file=sys.stderr)
    return plan.gpus_per_task


def _jobs(plan: Plan, todo: list[int], cpu_only: bool) -> list[Job]:
    argv = plan.spec.argv(cpu_only)
    words = plan.spec.words(cpu_only)
    by_name = collections.defaultdict(list)
    for path in plan.inputs:
        by_name[os.path.basename(path)].append(path)
    jobs = []
    for index in todo:
        input_path, output = plan.inputs[index], plan.outputs[index]
        guards = (input_path, *(p for p in by_name.get(os.path.basename(output), ())
                                if p != input_path))
        jobs.append(Job(index=index, input=input_path, output=output, argv=argv,
                        kind=plan.spec.kind, words=words, guards=guards, env=plan.env,
                        timeout=plan.timeout,
                        test_kill=plan.test_kill == os.path.basename(input_path)))
    return jobs


def _execute(plan: Plan, jobs: list[Job], records: list[dict[str, Any]],
             gpus: float, stop: StopSignals) -> float:
    """Runs the tasks and fills in the records, until they end or a signal
    asks to stop (then the files not done are cancelled). Returns the
    seconds from the first task submitted to the last ended (the batch's
    time less Ray's start)."""
    started = time.monotonic()
    task = ray.remote(
        num_cpus=plan.cpus_per_task, num_gpus=gpus,
        # max_retries counts lost workers and nodes as well as exceptions
        max_retries=plan.retries, retry_exceptions=True)(worker.run_job)
    progress = Progress.remote()
    pending = {task.options(name=f"gpuconvolve-batch {shown(job.name)}").remote(job, progress):
               job for job in jobs}
    line = ProgressLine(len(records), counts_frames=plan.spec.kind == "edge-energy",
                        enabled=plan.show_progress)
    finished = sum(r["status"] == "skipped" for r in records)
    failed = 0
    snapshot: dict[str, dict] = {"attempts": {}, "places": {}, "frames": {}, "errors": {}}
    try:
        while pending and not stop.requested:
            ready, _ = ray.wait(list(pending), num_returns=len(pending), timeout=POLL)
            if stop.requested:
                break
            for ref in ready:
                job = pending.pop(ref)
                ok = _collect(ref, records[job.index])
                finished += 1
                failed += not ok
            previous, snapshot = snapshot, _snapshot(progress, snapshot)
            for note in _retry_notes(previous, snapshot, records):
                line.note(note)
            frames = sum(snapshot["frames"].values())
            running = sum(job.index in snapshot["attempts"] for job in pending.values())
            line.update(finished, failed, running, len(pending) - running, frames,
                        file_ended=bool(ready))
    finally:
        line.close()
        if pending:
            _cancel(pending, records)
        snapshot = _snapshot(progress, snapshot, timeout=2 if stop.requested else 10)
        for job in jobs:
            _fill_from_progress(records[job.index], job.index, snapshot)
    return time.monotonic() - started


def _cancel(pending: dict[ray.ObjectRef, Job], records: list[dict[str, Any]]) -> None:
    """Files that ended in the meantime are done; the others are cancelled
    (their workers killed, and with them the commands)."""
    try:
        ready, _ = ray.wait(list(pending), num_returns=len(pending), timeout=0)
    except Exception:
        ready = []
    for ref in ready:
        record = records[pending.pop(ref).index]
        if not _collect(ref, record):
            record.update(status="cancelled", error=None, log=[])
    for ref, job in pending.items():
        try:
            ray.cancel(ref, force=True)
        except Exception:
            pass
        records[job.index]["status"] = "cancelled"


def _collect(ref: ray.ObjectRef, record: dict[str, Any]) -> bool:
    try:
        result = ray.get(ref)
    except Exception as e:
        message = _error_text(e)
        record.update(status="failed", error=message[0], log=message[1:])
        return False
    record.update(status="done", frames=result["frames"], seconds=result["seconds"],
                  node=result["node"], gpus=result["gpus"],
                  cuda_visible_devices=result["cuda_visible_devices"],
                  algorithms=result["algorithms"])
    return True


def _error_text(error: Exception) -> list[str]:
    """The error's first line, then the command's output when there is one."""
    cause = getattr(error, "cause", None)
    if isinstance(error, ray.exceptions.RayTaskError) and cause is not None:
        # the task's own exception, without Ray's traceback around it
        text = str(cause)
        if type(cause).__name__ != "JobFailed":
            text = f"{type(cause).__name__}: {text}"
    else:
        text = str(error) or type(error).__name__
    lines = text.strip().splitlines() or [type(error).__name__]
    return lines


def _retry_notes(previous: dict[str, dict], now: dict[str, dict],
                 records: list[dict[str, Any]]) -> list[str]:
    """A line for each retry started since the last snapshot, with why the
    attempt before it failed."""
    notes = []
    for index, attempts in now["attempts"].items():
        for attempt in range(max(previous["attempts"].get(index, 1), 1), attempts):
            why = now["errors"].get(index, {}).get(attempt, LOST)
            notes.append(f"retrying {shown(os.path.basename(records[index]['input']))} "
                         f"(attempt {attempt + 1}): attempt {attempt} failed: {why}")
    return notes


def _snapshot(progress: Any, previous: dict[str, dict], timeout: float = 10) -> dict[str, dict]:
    try:
        return ray.get(progress.snapshot.remote(), timeout=timeout)
    except Exception:                     # keep going without fresh counts
        return previous


def _fill_from_progress(record: dict[str, Any], index: int, snapshot: dict[str, dict]) -> None:
    """Attempts, and where a file that failed ran last."""
    record["attempts"] = snapshot["attempts"].get(index, record["attempts"])
    errors = snapshot["errors"].get(index, {})
    last_failed = record["attempts"] if record["status"] == "failed" else record["attempts"] - 1
    record["failed_attempts"] = [{"attempt": a, "error": errors.get(a, LOST)}
                                 for a in range(1, last_failed + 1)]
    place = snapshot["places"].get(index)
    if record["status"] != "done" and place:
        record.update(node=place["node"], gpus=place["gpus"],
                      cuda_visible_devices=place["cuda_visible_devices"])


def _remove_parts(plan: Plan, wait: float) -> int:
    """Removes the temporary outputs of the batch's outputs whose attempt
    is over (files.py), waiting up to `wait` seconds for those of attempts
    still being stopped. Returns how many it removed."""
    names = [os.path.basename(o) for o in plan.outputs]
    deadline = time.monotonic() + wait
    removed, busy = files.remove_parts(plan.output_dir, names, plan.input_keys)
    while busy and time.monotonic() < deadline:
        time.sleep(0.2)
        more, busy = files.remove_parts(plan.output_dir, names, plan.input_keys)
        removed += more
    return removed


def _describe(plan: Plan) -> dict[str, Any]:
    spec = plan.spec
    described: dict[str, Any] = {"kind": spec.kind, "properties": spec.properties}
    if isinstance(spec, EdgeEnergy):
        described.update(edge_energy=spec.binary, threshold=spec.threshold)
    else:
        described.update(pipeline=spec.template, preset=spec.preset)
    described.update(output_dir=plan.output_dir, retries=plan.retries, timeout=plan.timeout,
                     resume=plan.resume)
    return described
