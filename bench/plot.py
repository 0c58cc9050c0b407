#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Plots of a gpuconvolve-bench CSV: one PNG per frame format, with time
against kernel size (log scale) and % of the measured FP32 FMA peak against
kernel size, for every implementation, each with the copy-floor and FMA-peak
lines measured in the same run. Square kernels only (kw == kh).

Usage: bench/plot.py bench.csv [--out DIR]
"""
import argparse
import collections
import csv
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return math.nan


def channels(fmt):
    return 1 if fmt in ("GRAY32F", "GRAY8") else 3


def label(row):
    if row["impl"] == "engine":
        name = "engine:" + row["requested"]
    else:
        name = row["impl"]
    return "%s %s" % (name, row["form"])


def load(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def plot_format(fmt, rows, out_dir):
    limits = {r["impl"]: r for r in rows if r["section"] == "limit"}
    kernel = [r for r in rows if r["section"] == "kernel"
              and r["kw"] == r["kh"] and not math.isnan(number(r["ms_median"]))]
    if not kernel:
        return None
    width, height = int(kernel[0]["width"]), int(kernel[0]["height"])
    samples = width * height * channels(fmt)
    copy_ms = number(limits.get("copy-floor", {}).get("ms_median"))
    peak = number(limits.get("fma-peak", {}).get("gflops"))

    series = collections.defaultdict(list)
    for r in kernel:
        series[label(r)].append((int(r["kw"]), number(r["ms_median"]),
                                 number(r["pct_fma_peak"])))
    ks = sorted({k for points in series.values() for k, _, _ in points})
    fine = [ks[0] + i * (ks[-1] - ks[0]) / 200.0 for i in range(201)]

    fig, (ax_ms, ax_pct) = plt.subplots(1, 2, figsize=(15, 6.5))
    styles = {"2d": "-", "sep": "--"}
    colours = plt.get_cmap("tab20").colors
    for i, name in enumerate(sorted(series)):
        points = sorted(series[name])
        form = name.rsplit(" ", 1)[-1]
        kw = dict(linestyle=styles.get(form, ":"), marker="o", markersize=3,
                  color=colours[i % len(colours)], label=name)
        ax_ms.plot([p[0] for p in points], [p[1] for p in points], **kw)
        ax_pct.plot([p[0] for p in points], [p[2] for p in points], **kw)

    if not math.isnan(copy_ms):
        ax_ms.axhline(copy_ms, color="black", linewidth=1.5,
                      label="copy floor %.3f ms" % copy_ms)
        if not math.isnan(peak):
            # % of peak a kernel would reach if it took the copy time
            ax_pct.plot(fine, [100.0 * 2.0 * k * k * samples / (copy_ms * 1e6)
                               / peak for k in fine],
                        color="black", linewidth=1.5,
                        label="at the copy floor")
    if not math.isnan(peak):
        ax_ms.plot(fine, [2.0 * k * k * samples / (peak * 1e6) for k in fine],
                   color="red", linewidth=1.5,
                   label="FMA peak %.0f GFLOP/s" % peak)
        ax_pct.axhline(100.0, color="red", linewidth=1.5, label="FMA peak")

    ax_ms.set_yscale("log")
    ax_ms.set_xlabel("kernel size k (k x k)")
    ax_ms.set_ylabel("ms per frame (median)")
    ax_ms.set_title("%s %dx%d: time" % (fmt, width, height))
    ax_pct.set_yscale("log")
    ax_pct.set_xlabel("kernel size k (k x k)")
    ax_pct.set_ylabel("% of the measured FP32 FMA peak (2*k*k flops/sample)")
    ax_pct.set_title("%s %dx%d: arithmetic rate" % (fmt, width, height))
    for ax in (ax_ms, ax_pct):
        ax.set_xticks(ks)
        ax.grid(True, which="both", alpha=0.3)
    ax_pct.legend(fontsize=7, loc="best", ncol=2)
    fig.tight_layout()
    path = os.path.join(out_dir, "bench-%s.png" % fmt)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("csv", help="CSV written by gpuconvolve-bench")
    parser.add_argument("--out", help="folder for the PNGs (default: the "
                        "CSV's folder)")
    args = parser.parse_args()
    rows = load(args.csv)
    out_dir = args.out or os.path.dirname(os.path.abspath(args.csv))
    os.makedirs(out_dir, exist_ok=True)
    by_format = collections.defaultdict(list)
    for r in rows:
        by_format[r["format"]].append(r)
    written = [p for fmt in sorted(by_format)
               if (p := plot_format(fmt, by_format[fmt], out_dir))]
    if not written:
        sys.exit("no kernel rows with times in %s" % args.csv)
    for p in written:
        print(p)


if __name__ == "__main__":
    main()
