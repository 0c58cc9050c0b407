"""Command line of gpuconvolve-batch: checks everything it can before Ray
starts; exit status 0 when every file succeeded, 1 when some failed, 2 for a
usage error (then nothing was run)."""
from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

from . import inputs
from .jobs import EdgeEnergy, Pipeline, UsageError, output_path, parse_properties

# tools/batch/gpuconvolve_batch/cli.py -> the source tree
SOURCE_ROOT = Path(__file__).resolve().parents[3]
DEFAULT_BUILD = SOURCE_ROOT / "build"
EDGE_ENERGY_ENV = "GPUCONVOLVE_EDGE_ENERGY"
TEST_KILL_ENV = "GPUCONVOLVE_BATCH_TEST_KILL"
# What the tasks' commands need to find the element, wherever they run.
FORWARDED_ENV = ("GST_PLUGIN_PATH", "GST_PLUGIN_PATH_1_0", "GST_PRESET_PATH",
                 "GPUCONVOLVE_TUNING_PATH", "GST_DEBUG")

DESCRIPTION = """\
Runs gpuconvolve over many video files with Ray, one task per file, on this
machine or on a Ray cluster. By default each file gets the edge-energy
analysis of examples/edge-energy (one CSV per file); --pipeline runs any
gst-launch-1.0 description instead."""

EPILOG = """\
examples:
  gpuconvolve-batch --output-dir out/ 'archive/*.webm'
  gpuconvolve-batch --address auto --input-list files.txt --output-dir /shared/out
  gpuconvolve-batch --output-dir out/ --preset blur-gaussian-5 clips/*.mkv \\
    --pipeline 'filesrc location={input} ! decodebin ! videoconvert ! gpuconvolve \\
                ! videoconvert ! vp8enc ! webmmux ! filesink location={output}' --suffix .webm

exit status: 0 every file succeeded (or was skipped), 1 some failed,
2 usage error (nothing was run). docs/batch.md has the details."""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gpuconvolve-batch", description=DESCRIPTION, epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("inputs", nargs="*", metavar="FILE-OR-GLOB",
                   help="video files, or globs (quoted; ** matches folders)")
    p.add_argument("-l", "--input-list", action="append", default=[], metavar="FILE",
                   help="a file with one path per line (- for standard input); repeatable")
    p.add_argument("-o", "--output-dir", required=True, metavar="DIR",
                   help="where the outputs go (made when missing); on a cluster, a folder "
                        "every node sees at the same path")

    job = p.add_argument_group("job")
    job.add_argument("--pipeline", metavar="TEMPLATE",
                     help="a gst-launch-1.0 description with {input} and {output} to run "
                          "instead of the edge-energy analysis")
    job.add_argument("--edge-energy", metavar="PATH",
                     help=f"the edge-energy program (default: ${EDGE_ENERGY_ENV}, else "
                          f"{DEFAULT_BUILD / 'examples' / 'edge-energy'})")
    job.add_argument("--threshold", type=float, metavar="T",
                     help="edge-energy's --threshold (strong-edge gradient, default 0.5)")
    job.add_argument("-p", "--property", action="append", default=[], metavar="NAME=VALUE",
                     help="a gpuconvolve property for every gpuconvolve element; repeatable")
    job.add_argument("--preset", metavar="NAME",
                     help="a gpuconvolve preset (@preset=) for every gpuconvolve element")
    job.add_argument("--suffix", metavar=".EXT",
                     help="the outputs' suffix (default .csv for edge-energy, the input's own "
                          "for --pipeline)")
    job.add_argument("--timeout", type=float, metavar="SECONDS",
                     help="how long one attempt may run before it counts as failed")

    cluster = p.add_argument_group("Ray")
    cluster.add_argument("--address", metavar="HOST:PORT",
                         help="join this running cluster ('auto': the one started on this "
                              "machine); default $RAY_ADDRESS, else a Ray instance of its own")
    cluster.add_argument("--gpus-per-task", type=float, metavar="N",
                         help="GPUs each task asks for (0.5 puts two on a GPU); default 1 where "
                              "Ray sees GPUs, else 0 with the CPU backend")
    cluster.add_argument("--cpus-per-task", type=float, default=1.0, metavar="N",
                         help="CPUs each task asks for (default 1)")
    cluster.add_argument("--retries", type=int, default=2, metavar="N",
                         help="how often a failed or lost task is tried again (default 2)")

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
    edge_energy = None
    if args.pipeline is not None:
        if args.threshold is not None:
            raise UsageError("--threshold is edge-energy's; it does not apply to --pipeline")
        spec = Pipeline(args.pipeline, properties, args.preset)
    else:
        if args.preset:
            raise UsageError(f"--preset {args.preset}: the edge-energy job sets its own Sobel "
                             "filters; a preset applies only to --pipeline")
        edge_energy = find_edge_energy(args.edge_energy)
        spec = EdgeEnergy(edge_energy, properties, args.threshold)

    files = inputs.expand_inputs(args.inputs, args.input_list)
    output_dir = inputs.prepare_output_dir(args.output_dir)
    suffix = args.suffix if args.suffix is not None else spec.default_suffix
    outputs = [output_path(output_dir, f, suffix) for f in files]
    inputs.check_unique_outputs(list(zip(files, outputs)))
    clash = set(files) & set(outputs)
    if clash:
        raise UsageError(f"{clash.pop()} would be written over: give another --output-dir "
                         "or --suffix")
    report_path = os.path.abspath(args.report or os.path.join(output_dir, "report.json"))
    if report_path in outputs:
        raise UsageError(f"--report {report_path} is also an output; give another --report")
    if os.path.dirname(report_path) != output_dir:
        inputs.check_writable(os.path.dirname(report_path), f"--report {args.report}")

    return Plan(spec=spec, inputs=files, outputs=outputs, output_dir=output_dir,
                report_path=report_path, command=["gpuconvolve-batch"] + argv,
                address=args.address or os.environ.get("RAY_ADDRESS") or None,
                gpus_per_task=args.gpus_per_task, cpus_per_task=args.cpus_per_task,
                retries=args.retries, timeout=args.timeout, resume=args.resume,
                env=task_env(edge_energy), test_kill=os.environ.get(TEST_KILL_ENV) or None,
                show_progress=not args.quiet)


def _check_numbers(args: argparse.Namespace) -> None:
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


def find_edge_energy(given: str | None) -> str:
    """The edge-energy program: --edge-energy, the environment, the build tree."""
    candidate = given or os.environ.get(EDGE_ENERGY_ENV) or str(DEFAULT_BUILD / "examples" /
                                                                "edge-energy")
    source = ("--edge-energy" if given else f"${EDGE_ENERGY_ENV}"
              if os.environ.get(EDGE_ENERGY_ENV) else "the build tree")
    path = candidate if os.sep in candidate else shutil.which(candidate) or candidate
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise UsageError(f"edge-energy program not found at {candidate} (from {source}); build "
                         "the project (meson compile -C build) or give --edge-energy PATH")
    return os.path.abspath(path)


def task_env(edge_energy: str | None) -> dict[str, str]:
    """Environment the driver hands to every task's command. Uninstalled (no
    plugin path set and a build with the plugin), it points GStreamer at that
    build, its presets and tuning tables, as `meson devenv` does."""
    env = {name: os.environ[name] for name in FORWARDED_ENV if name in os.environ}
    build = Path(edge_energy).parent.parent if edge_energy else DEFAULT_BUILD
    plugin_dir = build / "gst"
    if ("GST_PLUGIN_PATH" not in env and "GST_PLUGIN_PATH_1_0" not in env
            and (plugin_dir / "libgstgpuconvolve.so").exists()):
        env["GST_PLUGIN_PATH"] = str(plugin_dir)
        env.setdefault("GST_PRESET_PATH", str(SOURCE_ROOT / "presets"))
        env.setdefault("GPUCONVOLVE_TUNING_PATH", str(SOURCE_ROOT / "presets" / "tuning"))
    return env


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser().parse_args(argv)
    try:
        plan = make_plan(args, argv)
    except UsageError as e:
        print(f"gpuconvolve-batch: {e}", file=sys.stderr)
        return 2
    from .driver import run
    return run(plan)
