#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Markdown summary of a gpuconvolve-bench CSV, for docs/performance.md:
per frame format, kernel size and form, the engine's fastest family, what
`auto` ran, and the peers, as times and ratios measured in the same run.

Usage: bench/summary.py bench.csv > summary.md
"""
import csv
import math
import sys


def num(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return math.nan


def main(path):
    rows = list(csv.DictReader(open(path)))
    limits = {}
    for r in rows:
        if r["section"] == "limit":
            limits.setdefault(r["format"], {})[r["impl"]] = num(r["ms_median"])
    points = {}
    order = []
    for r in rows:
        if r["section"] != "kernel":
            continue
        key = (r["format"], r["width"], r["height"], r["kw"], r["kh"], r["form"])
        if key not in points:
            points[key] = []
            order.append(key)
        points[key].append(r)

    current = None
    for key in order:
        fmt, w, h, kw, kh, form = key
        if (fmt, w, h) != current:
            current = (fmt, w, h)
            floor = limits.get(fmt, {}).get("copy-floor", math.nan)
            print("\n### %s %sx%s (copy floor %.4f ms)\n" % (fmt, w, h, floor))
            print("| kernel | form | fastest engine family | ms | x copy floor "
                  "| % FMA peak | auto ran | auto ms | NPP ms | NPP / fastest "
                  "| NPP row+col ms | cuFFT ms |")
            print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        engine = [r for r in points[key] if r["impl"] == "engine"
                  and r["requested"] != "auto" and r["check"] == "ok"]
        auto = [r for r in points[key] if r["impl"] == "engine"
                and r["requested"] == "auto"]
        peers = {r["impl"]: r for r in points[key] if r["impl"] != "engine"}
        if not engine:
            continue
        best = min(engine, key=lambda r: num(r["ms_median"]))
        bms = num(best["ms_median"])
        npp = num(peers.get("npp", {}).get("ms_median"))
        print("| %sx%s | %s | %s | %.4f | %.2f | %.1f | %s | %.4f | %s | %s | %s | %s |" % (
            kw, kh, form, best["description"].split(" (")[0], bms,
            num(best["x_copy_floor"]), num(best["pct_fma_peak"]),
            auto[0]["description"].split(" (")[0] if auto else "-",
            num(auto[0]["ms_median"]) if auto else math.nan,
            "%.4f" % npp if not math.isnan(npp) else "-",
            "%.2f" % (npp / bms) if not math.isnan(npp) else "-",
            "%.4f" % num(peers["npp-sep"]["ms_median"]) if "npp-sep" in peers else "-",
            "%.4f" % num(peers["cufft"]["ms_median"]) if "cufft" in peers else "-"))


if __name__ == "__main__":
    main(sys.argv[1])
