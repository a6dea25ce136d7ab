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
The largest single gaps follow (a task that lags while its block records
nothing — session 30's join input, ~450 µs between instances — shows
there first).

    python3 scripts/trace-gaps.py TRACE.json [--pe 0] [--tasks 12]
    python3 scripts/trace-gaps.py TRACE.json --task T    # every instance of task T
    python3 scripts/trace-gaps.py TRACE.json --block B   # what block B ran and waited for
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
    def opt(name, default):
        return int(args[args.index(name) + 1]) if name in args else default

    pe = opt("--pe", 0)
    shown = opt("--tasks", 12)
    one_task = opt("--task", None)
    one_block = opt("--block", None)
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

    if one_task is not None:
        inst = sorted(by_task.get(one_task, []), key=lambda e: e["args"]["iteration"])
        if not inst:
            print("no instances of task", one_task, "on PE", pe)
            return 1
        print(f"task {one_task}: {'iter':>6} {'block':>6} {'start µs':>10} {'span µs':>8} {'gap µs':>9}")
        for k, e in enumerate(inst):
            gap = inst[k + 1]["ts"] - (e["ts"] + e["dur"]) if k + 1 < len(inst) else float("nan")
            print(f"{'':>{len(str(one_task)) + 6}}{e['args']['iteration']:>6} {e['tid']:>6} "
                  f"{e['ts'] - t0:>10.2f} {e['dur']:>8.2f} {gap:>9.2f}")
        return 0
    if one_block is not None:
        rows = [(e["ts"], "task", f"{e['args']['task']} iteration {e['args']['iteration']}", e["dur"])
                for e in tasks if e["tid"] == one_block]
        rows += [(e["ts"], "wait", e["name"], e["dur"]) for e in waits if e["tid"] == one_block]
        if not rows:
            print("nothing recorded for block", one_block, "on PE", pe)
            return 1
        print(f"block {one_block}: {'start µs':>10} {'µs':>8}  what")
        for ts, kind, what, dur in sorted(rows):
            print(f"{'':>{len(str(one_block)) + 8}}{ts - t0:>10.2f} {dur:>8.2f}  {kind} {what}")
        return 0

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
    big = []
    for t, evs in by_task.items():
        inst = sorted(evs, key=lambda e: e["args"]["iteration"])
        for a, b in zip(inst, inst[1:]):
            end = a["ts"] + a["dur"]
            w = waited(b["tid"], end, b["ts"]) if a["tid"] == b["tid"] else float("nan")
            big.append((b["ts"] - end, t, a["args"]["iteration"], a["tid"], b["tid"], w))
    big.sort(reverse=True)
    seen, top = set(), []
    for g in big:  # the largest gap of each task, the five largest tasks
        if g[1] not in seen:
            seen.add(g[1])
            top.append(g)
    if top:
        print("\nlargest gap of each task, the five largest (--task T, --block B for more):")
        for gap, t, it, ba, bb, w in top[:5]:
            where = f"block {ba}" if ba == bb else f"block {ba} → {bb}"
            print(f"  task {t}: {gap:.2f} µs after iteration {it} ({where}; waits recorded in it: {w:.2f} µs)")
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
