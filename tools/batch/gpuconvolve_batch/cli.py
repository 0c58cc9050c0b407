# SPDX-License-Identifier: LGPL-2.1-or-later
"""Command line of gpuconvolve-batch: checks everything it can before Ray
starts; exit status 0 when every file succeeded, 1 when some failed (or the
report could not be written), 2 for a usage error (then nothing was run),
128 + the signal's number when a signal stopped it (signals.py)."""
from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

from . import files, inputs
from .files import shown
from .jobs import (RUNNER_NAME, EdgeEnergy, Pipeline, UsageError, check_template,
                   check_with_element, output_path, parse_properties, split_template)
from .shares import FILES_PER_GPU
from .signals import Interrupted, StopSignals

# tools/batch/gpuconvolve_batch/cli.py -> the source tree
SOURCE_ROOT = Path(__file__).resolve().parents[3]
DEFAULT_BUILD = SOURCE_ROOT / "build"
RUNNER_ENV = "GPUCONVOLVE_BATCH_RUN"
TEST_KILL_ENV = "GPUCONVOLVE_BATCH_TEST_KILL"
# What the workers need to find the element, wherever they run.
FORWARDED_ENV = ("GST_PLUGIN_PATH", "GST_PLUGIN_PATH_1_0", "GST_PRESET_PATH",
                 "GPUCONVOLVE_TUNING_PATH", "GST_DEBUG")

DESCRIPTION = """\
Runs gpuconvolve over many video files with Ray, on this machine or on a
Ray cluster: slots of warm workers (--files-per-gpu of them on each GPU, or
one per --cpus-per-task CPUs without GPUs) take file after file. By default
each file gets the edge-energy analysis of examples/edge-energy (one CSV per
file); --pipeline runs any gst-launch-1.0 description instead."""

EPILOG = """\
examples:
  gpuconvolve-batch --output-dir out/ 'archive/*.webm'
  gpuconvolve-batch --address auto --input-list files.txt --output-dir /shared/out
  gpuconvolve-batch --output-dir out/ --preset blur-gaussian-5 clips/*.mkv \\
    --pipeline 'filesrc location={input} ! decodebin ! videoconvert ! gpuconvolve \\
                ! videoconvert ! vp8enc ! webmmux ! filesink location={output}' --suffix .webm

exit status: 0 every file succeeded (or was skipped), 1 some failed or
were cancelled (or the report could not be written), 2 usage error (nothing
was run), 130 stopped by SIGINT, 143 by SIGTERM (files not done are
cancelled, the report is written). docs/batch.md has the details."""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gpuconvolve-batch", description=DESCRIPTION, epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("inputs", nargs="*", metavar="FILE-OR-GLOB",
                   help="video files, or globs (quoted; ** matches folders)")
    p.add_argument("-l", "--input-list", action="append", default=[], metavar="FILE",
                   help="a file with one path per line, the whole line but its newline "
                        "(- for standard input); repeatable")
    p.add_argument("-0", "--null", action="store_true",
                   help="the --input-list files hold paths that each end with a NUL byte "
                        "(find -print0), for paths with newlines")
    p.add_argument("-o", "--output-dir", required=True, metavar="DIR",
                   help="where the outputs go (made when missing); on a cluster, a folder "
                        "every node sees at the same path")

    job = p.add_argument_group("job")
    job.add_argument("--pipeline", metavar="TEMPLATE",
                     help="a gst-launch-1.0 description with {input} and {output} to run "
                          "instead of the edge-energy analysis")
    job.add_argument("--edge-energy", metavar="PATH", help=argparse.SUPPRESS)
    job.add_argument("--threshold", type=float, metavar="T",
                     help="edge-energy's --threshold (strong-edge gradient, default 0.5)")
    job.add_argument("--reduce", choices=("statistics", "host"),
                     help="edge-energy's --reduce: statistics (default: the element's "
                          "per-frame statistics, no frame downloaded) or host (the reference)")
    job.add_argument("-p", "--property", action="append", default=[], metavar="NAME=VALUE",
                     help="a gpuconvolve property for every gpuconvolve element; repeatable")
    job.add_argument("--preset", metavar="NAME",
                     help="a gpuconvolve preset (@preset=) for every gpuconvolve element")
    job.add_argument("--suffix", metavar=".EXT",
                     help="the outputs' suffix (default .csv for edge-energy, the input's own "
                          "for --pipeline)")
    job.add_argument("--timeout", type=float, metavar="SECONDS",
                     help="how long one attempt may run before it counts as failed, for "
                          "either job (each also fails where it has not prerolled within "
                          "30 s)")

    cluster = p.add_argument_group("Ray")
    cluster.add_argument("--address", metavar="HOST:PORT",
                         help="join this running cluster ('auto': the one started on this "
                              "machine); default $RAY_ADDRESS, else a Ray instance of its own")
    cluster.add_argument("--files-per-gpu", type=int, metavar="N",
                         help=f"files run at once on each GPU, each by a warm worker of its own "
                              f"(default {FILES_PER_GPU}: enough to keep a GPU's video decoders "
                              "busy)")
    cluster.add_argument("--gpus-per-task", type=float, metavar="G",
                         help="each slot's share of a GPU, the older way to say it: G is "
                              "--files-per-gpu 1/G; 0: no GPU, the CPU backend")
    cluster.add_argument("--cpus-per-task", type=float, default=1.0, metavar="N",
                         help="CPUs each slot asks for (default 1); without GPUs, a node runs "
                              "its CPUs / N files at once")
    cluster.add_argument("--retries", type=int, default=2, metavar="N",
                         help="how often a failed file, or one whose worker or node was lost, "
                              "is tried again (default 2)")

    out = p.add_argument_group("outcome")
    out.add_argument("--resume", action="store_true",
                     help="skip files whose output exists (outputs exist only once complete)")
    out.add_argument("--report", metavar="PATH",
                     help="the JSON report (default OUTPUT_DIR/report.json)")
    out.add_argument("-q", "--quiet", action="store_true", help="no progress line")
    return p


def make_plan(args: argparse.Namespace, argv: list[str]):
    from .driver import Plan       # imports Ray: not needed for --help

    _check_numbers(args)
    properties = parse_properties(args.property)
    runner = find_runner()
    env = task_env(_build_of(runner, 2))
    if args.edge_energy is not None:
        print(f"gpuconvolve-batch: --edge-energy is no longer used (ignored): the edge-energy "
              f"job runs inside {RUNNER_NAME}, the same analysis as examples/edge-energy; "
              f"${RUNNER_ENV} chooses the program", file=sys.stderr)
    if args.pipeline is not None:
        for option in ("threshold", "reduce"):
            if getattr(args, option) is not None:
                raise UsageError(f"--{option} is edge-energy's; it does not apply to --pipeline")
        words = split_template(args.pipeline)
        check_template(words)
        preset_properties, missing = check_with_element(runner, env, properties, args.preset,
                                                        words)
        if missing:
            address = args.address or os.environ.get("RAY_ADDRESS")
            if not address:              # this machine is the one that runs it
                raise UsageError(missing)
            print(f"gpuconvolve-batch: {missing}: the nodes must have it", file=sys.stderr)
        spec = Pipeline(args.pipeline, properties, args.preset, preset_properties)
    else:
        if args.preset:
            raise UsageError(f"--preset {args.preset}: the edge-energy job sets its own Sobel "
                             "filter; a preset applies only to --pipeline")
        spec = EdgeEnergy(properties, args.threshold, args.reduce)
        if properties:                 # backend=: the element's to judge
            check_with_element(runner, env, properties, None, [])

    paths = inputs.expand_inputs(args.inputs, args.input_list, args.null,
                                 os.path.abspath(args.output_dir))
    input_keys = files.keys(paths)
    output_dir = inputs.prepare_output_dir(args.output_dir)
    suffix = args.suffix if args.suffix is not None else spec.default_suffix
    outputs = [output_path(output_dir, p, suffix) for p in paths]
    pairs = list(zip(paths, outputs))
    inputs.check_unique_outputs(pairs)
    inputs.check_outputs(pairs, input_keys)
    report_path = inputs.check_report(args.report or os.path.join(output_dir, "report.json"),
                                      output_dir, outputs, input_keys,
                                      [a for a in args.inputs if inputs.is_glob(a)])

    return Plan(spec=spec, inputs=paths, outputs=outputs, output_dir=output_dir,
                report_path=report_path, command=["gpuconvolve-batch"] + argv, runner=runner,
                address=args.address or os.environ.get("RAY_ADDRESS") or None,
                files_per_gpu=args.files_per_gpu,
                gpus_per_task=args.gpus_per_task, cpus_per_task=args.cpus_per_task,
                retries=args.retries, timeout=args.timeout, resume=args.resume,
                env=env, test_kill=os.environ.get(TEST_KILL_ENV) or None,
                show_progress=not args.quiet, input_keys=input_keys)


def _check_numbers(args: argparse.Namespace) -> None:
    if args.files_per_gpu is not None and args.files_per_gpu < 1:
        raise UsageError("--files-per-gpu must be 1 or more")
    if args.files_per_gpu is not None and args.gpus_per_task is not None:
        raise UsageError("--files-per-gpu and --gpus-per-task say the same thing (G is "
                         "--files-per-gpu 1/G): give one")
    if args.gpus_per_task is not None and not args.gpus_per_task >= 0:
        raise UsageError("--gpus-per-task must be 0 or more")
    if args.gpus_per_task and args.gpus_per_task > 1 and args.gpus_per_task % 1:
        raise UsageError("--gpus-per-task above 1 must be a whole number")
    if not args.cpus_per_task >= 0:
        raise UsageError("--cpus-per-task must be 0 or more")
    if args.retries < 0:
        raise UsageError("--retries must be 0 or more")
    if args.timeout is not None and not args.timeout > 0:
        raise UsageError("--timeout must be more than 0 seconds")
    if args.threshold is not None and not args.threshold >= 0:
        raise UsageError("--threshold must be 0 or more")


def find_runner() -> str:
    """gpuconvolve-batch-run: the environment, the build tree, $PATH."""
    given = os.environ.get(RUNNER_ENV)
    built = DEFAULT_BUILD / "tools" / "batch" / RUNNER_NAME
    for candidate in ([given] if given else [str(built), shutil.which(RUNNER_NAME)]):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return os.path.abspath(candidate)
    where = f"${RUNNER_ENV} ({shown(given)})" if given else f"{built} or $PATH"
    raise UsageError(f"{RUNNER_NAME} not found at {where}: it is the worker that runs the "
                     "jobs; build the project (meson compile -C build) or set "
                     f"{RUNNER_ENV}")


def task_env(build: Path) -> dict[str, str]:
    """Environment the driver hands to every worker (and to its own
    checks). Uninstalled (no plugin path set and `build`, the build of the
    worker, has the plugin), it points GStreamer at that build, its presets
    and tuning tables, as `meson devenv` does."""
    env = {name: os.environ[name] for name in FORWARDED_ENV if name in os.environ}
    plugin_dir = build / "gst"
    if ("GST_PLUGIN_PATH" not in env and "GST_PLUGIN_PATH_1_0" not in env
            and (plugin_dir / "libgstgpuconvolve.so").exists()):
        env["GST_PLUGIN_PATH"] = str(plugin_dir)
        env.setdefault("GST_PRESET_PATH", str(SOURCE_ROOT / "presets"))
        env.setdefault("GPUCONVOLVE_TUNING_PATH", str(SOURCE_ROOT / "presets" / "tuning"))
    return env


def _build_of(program: str, depth: int) -> Path:
    """The build folder `depth` levels above an uninstalled program."""
    parents = Path(program).parents
    return parents[depth] if depth < len(parents) else DEFAULT_BUILD


def main(argv: list[str] | None = None) -> int:
    stop = StopSignals()
    stop.install()
    # a path that is not UTF-8 never makes a message fail
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(errors="backslashreplace")
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser().parse_args(argv)
    try:
        with stop.breakable():
            plan = make_plan(args, argv)
    except UsageError as e:
        print(f"gpuconvolve-batch: {e}".replace("\n", "\ngpuconvolve-batch: "), file=sys.stderr)
        return 2
    except Interrupted as e:
        print("gpuconvolve-batch: stopped while checking the arguments: nothing was run, no "
              "report", file=sys.stderr)
        return e.status
    from .driver import run
    return run(plan, stop)
