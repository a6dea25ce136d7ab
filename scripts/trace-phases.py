#!/usr/bin/env python3
"""Where an iteration's time goes, from a trace written by `autarky … --trace`.

Groups task spans by phase (the task's name without its tile number and PE:
"#12 (spmv tile 3 of PE 0)" is phase "spmv"), then per graph iteration
prints each phase's window (first start to last end, relative to the
iteration's first start), the median and max single-span duration, and the
iteration's span. Medians over the iterations given (the first is skipped:
warm-up). Clocks are per PE; phases are compared within PE 0 only.

    python3 scripts/trace-phases.py TRACE.json [--pe 0] [--skip 1]
"""
import json
import re
import statistics
import sys
from collections import defaultdict


def phase_of(name):
    m = re.match(r"#\d+ \((.*)\)$", name)
    label = m.group(1) if m else name
    label = re.sub(r" of PE \d+$", "", label)
    label = re.sub(r" tile \d+$", "", label)
    label = re.sub(r"^tile \[[\d, ]+\]$", "tile", label)  # Jacobi: "tile [z, y, x]"
    label = re.sub(r" PE \d+ → PE \d+$", "", label)  # CG: "gather PE 0 → PE 1"
    label = re.sub(r" \d+$", "", label)
    return label


def main():
    args = sys.argv[1:]
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if args else 2
    path = args[0]
    pe = int(args[args.index("--pe") + 1]) if "--pe" in args else 0
    skip = int(args[args.index("--skip") + 1]) if "--skip" in args else 1
    d = json.load(open(path))
    events = d["traceEvents"] if isinstance(d, dict) else d
    spans = defaultdict(lambda: defaultdict(list))  # iteration -> phase -> [(ts, dur)]
    for e in events:
        if e.get("ph") != "X" or e.get("cat") != "task" or e.get("pid") != pe:
            continue
        it = e["args"]["iteration"]
        spans[it][phase_of(e["name"])].append((e["ts"], e["dur"]))
    iters = sorted(spans)[skip:]
    if not iters:
        print("no iterations traced")
        return 1
    # The span of an iteration: its first task start to the next one's.
    starts = {i: min(ts for ph in spans[i].values() for ts, _ in ph) for i in spans}
    periods = [starts[i + 1] - starts[i] for i in iters if i + 1 in starts]
    rows = defaultdict(lambda: defaultdict(list))
    for i in iters:
        t0 = starts[i]
        for ph, xs in spans[i].items():
            rows[ph]["begin"].append(min(ts for ts, _ in xs) - t0)
            rows[ph]["end"].append(max(ts + du for ts, du in xs) - t0)
            rows[ph]["median_span"].append(statistics.median(du for _, du in xs))
            rows[ph]["max_span"].append(max(du for _, du in xs))
            rows[ph]["count"].append(len(xs))
    med = statistics.median
    print(f"PE {pe}: {len(iters)} iterations; iteration period (first start to next): "
          f"median {med(periods):.2f} us" if periods else f"PE {pe}: {len(iters)} iterations")
    print(f"{'phase':32} {'n':>6} {'begin':>8} {'end':>8} {'window':>8} {'med span':>9} {'max span':>9}  (us, medians)")
    for ph in sorted(rows, key=lambda p: med(rows[p]["begin"])):
        r = rows[ph]
        b, e = med(r["begin"]), med(r["end"])
        print(f"{ph[:32]:32} {med(r['count']):6.0f} {b:8.2f} {e:8.2f} {e - b:8.2f} "
              f"{med(r['median_span']):9.2f} {med(r['max_span']):9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
