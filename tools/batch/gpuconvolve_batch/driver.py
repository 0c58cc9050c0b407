# SPDX-License-Identifier: LGPL-2.1-or-later
"""Runs a batch on Ray: a warm worker a GPU (a node without GPUs;
schedule.py, slot.py) runs its files side by side, a failed file is tried
again, with a progress line while they run and the report at the end."""
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

from . import files, report, schedule, shares
from .files import FileKey, shown
from .jobs import EdgeEnergy, Job, Pipeline, UsageError
from .progress import Progress, ProgressLine
from .signals import Interrupted, StopSignals

# Ray's notices of what the driver reports itself, with the file's name: a
# retry (with a traceback), a worker lost
_RETRY_NOTICE = re.compile(r"retries remaining|will be retried|"
                           r"A worker died or was killed while executing")


@dataclass
class Plan:
    """A checked command line."""
    spec: EdgeEnergy | Pipeline
    inputs: list[str]
    outputs: list[str]
    output_dir: str
    report_path: str
    command: list[str]
    runner: str
    address: str | None = None
    files_per_gpu: int | None = None      # None: shares.FILES_PER_GPU
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
    # what each output to make is before the batch (report.settle_cancelled)
    before = {index: files.key(records[index]["output"]) for index in todo}
    # the temporary outputs of attempts whose worker or driver was killed
    removed = _remove_parts(plan, wait=0)
    if removed:
        print(f"gpuconvolve-batch: removed {removed} temporary output(s) (.NAME.XXXXXXXX.part) "
              "left by an earlier run", file=sys.stderr)

    started_at = datetime.datetime.now(datetime.timezone.utc)
    started = time.monotonic()
    ray_info: dict[str, Any] = {}
    workers: list[dict[str, Any]] = []
    line = ProgressLine(len(records), counts_frames=plan.spec.kind == "edge-energy",
                        enabled=plan.show_progress)
    try:
        stop.check()                     # a signal while the arguments were checked
        if todo:
            _adopt_orphans()
            line.phase("starting Ray" if not plan.address else f"joining {plan.address}")
            try:
                with stop.breakable():   # Ray half started would leave processes
                    ray_started = time.monotonic()
                    ray_info = _connect(plan.address)
                    ray_info["startup_seconds"] = round(time.monotonic() - ray_started, 3)
            except Exception as e:
                _explain_connect_failure(plan.address, e)
                return 2
            stop.install()
            stop.check()
            share = _share(plan, ray_info, len(todo))
            ray_info.update(files_per_gpu=(plan.files_per_gpu or shares.FILES_PER_GPU)
                            if plan.gpus_per_task is None and share.gpus_per_file > 0 else None,
                            gpus_per_task=share.gpus_per_file, cpus_per_task=share.cpus_per_file,
                            workers=len(share.workers), slots=share.files)
            jobs = _jobs(plan, todo, share.gpus_per_file == 0)
            workers = _execute(plan, jobs, records, share, stop, line)
    except Interrupted:
        pass
    except UsageError as e:
        print(f"gpuconvolve-batch: {e}", file=sys.stderr)
        return 2
    finally:
        line.close()
        _stop_ray()
        _end_leftovers()
        _remove_parts(plan, wait=5)
    seconds = time.monotonic() - started
    if stop.requested:
        for record in records:
            if record["status"] == "pending":
                record["status"] = "cancelled"
    report.settle_cancelled(records, before, counts_frames=plan.spec.kind == "edge-energy")

    total = report.totals(records, seconds, counts_frames=plan.spec.kind == "edge-energy",
                          workers=workers)
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
            "workers": workers,
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
    resources = ray.cluster_resources()
    return {"address": address or "embedded", "gcs_address": ray.get_runtime_context().gcs_address,
            "version": ray.__version__, "nodes": len(nodes), "gpus": resources.get("GPU", 0),
            "cpus": resources.get("CPU", 0),
            # (not in the report: each node's CPUs, for a worker a node)
            "_node_cpus": {n["NodeID"]: n.get("Resources", {}).get("CPU", 0) for n in nodes}}


def _adapt_ray() -> None:
    """Changes to Ray's internals (the pinned version's) for the driver:
    ray.init sets SIGTERM handlers that leave at once (sys.exit), wherever
    the driver is, and a C++ one that prints a stack trace, where the
    batch's own (signals.py) stops it cleanly; it starts its processes in
    the driver's process group, where a signal to the group would end them
    under the running batch; and it sends the driver's
    command line as UTF-8, which a path that is not fails (the bytes are
    written as escapes instead)."""
    import ray._private.ray_constants as ray_constants
    import ray._private.services as ray_services
    import ray._private.utils as ray_utils
    ray_utils.set_sigterm_handler = lambda handler: None
    popen = ray_services.ConsolePopen
    if not getattr(popen, "own_group", False):
        class OwnGroup(popen):
            """Ray's processes (the embedded instance's GCS, raylet and
            the rest, which start the slots) in a process group of their
            own: a signal to the batch's group (a scheduler's SIGTERM, a
            terminal's Ctrl-C) reaches the driver only, which stops them
            in order. They still die with it (Ray's fate sharing)."""
            own_group = True

            def __init__(self, *args: Any, **kwargs: Any) -> None:
                kwargs["process_group"] = 0
                super().__init__(*args, **kwargs)
        ray_services.ConsolePopen = OwnGroup
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
    """Ray prints a notice on stdout when a worker of the batch dies (and
    one with a traceback when it retries a task); the driver notes lost
    workers and retries itself (with the file's name), so those are
    dropped, and Ray's other notices go to stderr. This reaches
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


def _share(plan: Plan, ray_info: dict[str, Any], files: int) -> shares.Share:
    """The workers: one a GPU running --files-per-gpu files (or
    --gpus-per-task's share), else one a node running its CPUs /
    --cpus-per-task files; no more than the CPUs hold, nor than there
    are files."""
    gpus = ray_info["gpus"]
    node_cpus = ray_info.pop("_node_cpus", {})
    if plan.gpus_per_task and gpus == 0:
        if not plan.address:
            raise UsageError(f"--gpus-per-task {plan.gpus_per_task:g}: Ray sees no GPU on this "
                             "machine; use --gpus-per-task 0 (the CPU backend)")
        print("gpuconvolve-batch: the cluster has no GPU now; the workers wait until a node "
              "with GPUs joins", file=sys.stderr)
    if plan.files_per_gpu and gpus == 0:
        print(f"gpuconvolve-batch: --files-per-gpu {plan.files_per_gpu}: Ray sees no GPU; "
              "the CPU backend runs CPUs / --cpus-per-task files at once", file=sys.stderr)
    if plan.cpus_per_task > ray_info["cpus"]:
        if not plan.address:
            raise UsageError(f"--cpus-per-task {plan.cpus_per_task:g}: Ray sees "
                             f"{ray_info['cpus']:g} CPUs on this machine")
        print(f"gpuconvolve-batch: --cpus-per-task {plan.cpus_per_task:g}: the cluster has "
              f"{ray_info['cpus']:g} CPUs now; the workers wait until a node that fits joins",
              file=sys.stderr)
    share = shares.share_of(plan.files_per_gpu or shares.FILES_PER_GPU, plan.gpus_per_task,
                            plan.cpus_per_task, gpus, node_cpus)
    notice = shares.fit(share, ray_info["cpus"], files)
    if notice:
        print(f"gpuconvolve-batch: {notice}", file=sys.stderr)
    return share


def _jobs(plan: Plan, todo: list[int], cpu_only: bool) -> list[Job]:
    options = plan.spec.options(cpu_only)
    words = plan.spec.words(cpu_only)
    by_name = collections.defaultdict(list)
    for path in plan.inputs:
        by_name[os.path.basename(path)].append(path)
    jobs = []
    for index in todo:
        input_path, output = plan.inputs[index], plan.outputs[index]
        guards = (input_path, *(p for p in by_name.get(os.path.basename(output), ())
                                if p != input_path))
        jobs.append(Job(index=index, input=input_path, output=output, kind=plan.spec.kind,
                        options=options, words=words, guards=guards, timeout=plan.timeout,
                        test_kill=plan.test_kill == os.path.basename(input_path)))
    return jobs


def _execute(plan: Plan, jobs: list[Job], records: list[dict[str, Any]],
             share: shares.Share, stop: StopSignals, line: ProgressLine) -> list[dict[str, Any]]:
    """Runs the files on the workers and fills in the records, until they
    end or a signal asks to stop (then the files not done are cancelled).
    Returns the report's workers."""
    progress = Progress.remote()
    scheduler = schedule.Scheduler(jobs, records, share, plan.runner, plan.env, plan.retries,
                                   progress, line, stop)
    try:
        scheduler.run()
    finally:
        line.close()
        scheduler.stop_workers()
    return scheduler.report_workers()


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
        described.update(threshold=spec.threshold, reduce=spec.reduce or "statistics")
    else:
        described.update(pipeline=spec.template, preset=spec.preset)
    described["worker"] = plan.runner
    described.update(output_dir=plan.output_dir, retries=plan.retries, timeout=plan.timeout,
                     resume=plan.resume)
    return described
