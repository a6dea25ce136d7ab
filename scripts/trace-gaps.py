#!/usr/bin/env python3
"""Where the time between a task's instances goes, from a Chrome-JSON trace
(`autarky … --trace FILE`, or the dispatch bench's `--trace-dir=DIR`).

For every task (PE 0 unless --pe): its instances, the blocks that ran them,
the median span of an instance (thread 0's start to end of the body) and
the median gap from one instance's end to the next one's start (the
completion, the hand-off and any wait in between), then per iteration the
window of every task's start (first to last), so that a join's inputs can
be told from the join itself. Waits the trace recorded on a task's blocks
between two of its instances are summed into the gap's `waited` column.

    python3 scripts/trace-gaps.py TRACE.json [--pe 0] [--tasks 12]
"""
import json
import statistics
import sys
from collections import defaultdict


def main():
    args = sys.argv[1:]
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if args else 2
    pe = int(args[args.index("--pe") + 1]) if "--pe" in args else 0
    shown = int(args[args.index("--tasks") + 1]) if "--tasks" in args else 12
    d = json.load(open(args[0]))
    events = d["traceEvents"] if isinstance(d, dict) else d
    tasks = [e for e in events if e.get("cat") == "task" and e.get("pid") == pe]
    waits = [e for e in events if e.get("cat") == "wait" and e.get("pid") == pe]
    if not tasks:
        print("no task spans for PE", pe)
        return 1
    t0 = min(e["ts"] for e in tasks)
    by_task = defaultdict(list)
    for e in tasks:
        by_task[e["args"]["task"]].append(e)
    waits_by_block = defaultdict(list)
    for e in waits:
        waits_by_block[e["tid"]].append((e["ts"], e["ts"] + e["dur"]))

    def waited(block, a, b):
        return sum(max(0.0, min(b, y) - max(a, x)) for x, y in waits_by_block[block])

    print(f"{'task':>8} {'inst':>5} {'blocks':>6} {'span µs':>8} {'gap µs':>8} {'waited':>8}  first → last end (µs)")
    order = sorted(by_task, key=lambda t: min(e["ts"] for e in by_task[t]))
    for t in order[:shown]:
        inst = sorted(by_task[t], key=lambda e: e["args"]["iteration"])
        gaps, w = [], []
        for a, b in zip(inst, inst[1:]):
            end = a["ts"] + a["dur"]
            gaps.append(b["ts"] - end)
            w.append(waited(b["tid"], end, b["ts"]) if a["tid"] == b["tid"] else float("nan"))
        span = statistics.median(e["dur"] for e in inst)
        gap = statistics.median(gaps) if gaps else float("nan")
        wt = statistics.median(w) if w else float("nan")
        blocks = len({e["tid"] for e in inst})
        last = inst[-1]["ts"] + inst[-1]["dur"] - t0
        print(f"{t:>8} {len(inst):>5} {blocks:>6} {span:>8.2f} {gap:>8.2f} {wt:>8.2f}  {inst[0]['ts'] - t0:.2f} → {last:.2f}")
    if len(order) > shown:
        print(f"… {len(order) - shown} more tasks (--tasks N shows more)")
    by_iter = defaultdict(list)
    for e in tasks:
        by_iter[e["args"]["iteration"]].append(e["ts"] - t0)
    print("\niteration: every task's start, first … last (µs from the first start)")
    for it in sorted(by_iter)[:40]:
        s = by_iter[it]
        print(f"{it:>6}: {min(s):9.2f} … {max(s):9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
