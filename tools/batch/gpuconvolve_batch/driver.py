"""Runs a batch on Ray: one task per file, retried when it fails, with a
progress line while they run and the report at the end."""
from __future__ import annotations

import datetime
import glob
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

from . import report, worker
from .jobs import EdgeEnergy, Job, Pipeline, UsageError
from .progress import Progress, ProgressLine

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


def run(plan: Plan) -> int:
    records = [report.new_record(i, o) for i, o in zip(plan.inputs, plan.outputs)]
    todo = []
    for index, record in enumerate(records):
        if plan.resume and os.path.exists(record["output"]):
            record["status"] = "skipped"
        else:
            todo.append(index)

    started_at = datetime.datetime.now(datetime.timezone.utc)
    started = time.monotonic()
    ray_info: dict[str, Any] = {}
    status = 0
    task_seconds = 0.0
    if todo:
        try:
            ray_info = _connect(plan.address)
        except Exception as e:
            _explain_connect_failure(plan.address, e)
            return 2
        try:
            gpus = _gpus_per_task(plan, ray_info)
            ray_info.update(gpus_per_task=gpus, cpus_per_task=plan.cpus_per_task)
            jobs = [_job(plan, index, gpus == 0) for index in todo]
            status, task_seconds = _execute(plan, jobs, records, gpus)
        except UsageError as e:
            print(f"gpuconvolve-batch: {e}", file=sys.stderr)
            return 2
        finally:
            ray.shutdown()
            _remove_parts(records)
    seconds = time.monotonic() - started

    total = report.totals(records, seconds, task_seconds,
                          counts_frames=plan.spec.kind == "edge-energy")
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
    })
    report.print_summary(records, total, plan.report_path)
    if status:
        return status
    return 1 if total["failed"] or total["cancelled"] else 0


def _connect(address: str | None) -> dict[str, Any]:
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


def _job(plan: Plan, index: int, cpu_only: bool) -> Job:
    input_path = plan.inputs[index]
    return Job(index=index, input=input_path, output=plan.outputs[index],
               argv=plan.spec.argv(input_path, cpu_only), kind=plan.spec.kind,
               env=plan.env, timeout=plan.timeout,
               test_kill=plan.test_kill == os.path.basename(input_path))


def _execute(plan: Plan, jobs: list[Job], records: list[dict[str, Any]],
             gpus: float) -> tuple[int, float]:
    """Runs the tasks and fills in the records. Returns 130 when interrupted,
    else 0, and the seconds from the first task submitted to the last ended
    (the batch's time less Ray's start)."""
    started = time.monotonic()
    task = ray.remote(
        num_cpus=plan.cpus_per_task, num_gpus=gpus,
        # max_retries counts lost workers and nodes as well as exceptions
        max_retries=plan.retries, retry_exceptions=True)(worker.run_job)
    # SIGTERM (kill, a scheduler's time limit) ends the batch like Ctrl-C:
    # the tasks are cancelled and the report is written.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    progress = Progress.remote()
    pending = {task.options(name=f"gpuconvolve-batch {job.name}").remote(job, progress): job
               for job in jobs}
    line = ProgressLine(len(records), counts_frames=plan.spec.kind == "edge-energy",
                        enabled=plan.show_progress)
    finished = sum(r["status"] == "skipped" for r in records)
    failed = 0
    snapshot: dict[str, dict] = {"attempts": {}, "places": {}, "frames": {}, "errors": {}}
    try:
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=len(pending), timeout=POLL)
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
    except KeyboardInterrupt:
        for ref, job in pending.items():
            ray.cancel(ref, force=True)
            records[job.index]["status"] = "cancelled"
        print("\ngpuconvolve-batch: interrupted; cancelled the files still running",
              file=sys.stderr)
        return 130, time.monotonic() - started
    finally:
        line.close()
        snapshot = _snapshot(progress, snapshot)
        for job in jobs:
            _fill_from_progress(records[job.index], job.index, snapshot)
    return 0, time.monotonic() - started


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
            notes.append(f"retrying {os.path.basename(records[index]['input'])} "
                         f"(attempt {attempt + 1}): attempt {attempt} failed: {why}")
    return notes


def _snapshot(progress: Any, previous: dict[str, dict]) -> dict[str, dict]:
    try:
        return ray.get(progress.snapshot.remote(), timeout=10)
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


def _remove_parts(records: list[dict[str, Any]]) -> None:
    """Temporary files of attempts whose worker was killed before it could
    remove them."""
    for record in records:
        if record["status"] in ("done", "failed", "cancelled"):
            for path in glob.glob(glob.escape(worker.part_prefix(record["output"]))
                                  + "*" + worker.PART_SUFFIX):
                try:
                    os.unlink(path)
                except OSError:
                    pass


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
