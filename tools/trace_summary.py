#!/usr/bin/env python3
"""Summarise the COLONY_TRACE files of one job: per rank, the median forward, backward,
all-reduce and optimizer-step times, the step time, and how far the ranks' backward passes end
apart (rank skew; ranks on one machine are lined up by each trace's clock_origin).

  COLONY_TRACE=/tmp/trace{rank}.json colonyrun --nproc_per_node=2 PROGRAM ...
  python3 tools/trace_summary.py /tmp/trace0.json /tmp/trace1.json

With --lockstep, the traces are of independent processes run at the same time (no
synchronization): pairing their steps by number, it prints how much longer the steps would take
if every step waited for the slowest process, the cost their own step-to-step jitter would put on
a data-parallel job whose synchronization cost nothing.

  COLONY_TRACE=/tmp/a.json lenet_cifar10 --benchmark ... & COLONY_TRACE=/tmp/b.json lenet_cifar10 ...
  python3 tools/trace_summary.py --lockstep /tmp/a.json /tmp/b.json

Only the Python standard library is used. The first --skip steps (default 20) are left out as
warm-up.
"""
import argparse
import json
import statistics


def load(path):
    events = json.load(open(path))["traceEvents"]
    origin = 0.0
    for e in events:
        if e.get("name") == "clock_origin":
            origin = float(e["args"]["steady_clock_us"])
    spans = {}
    for e in events:
        if e.get("ph") == "X":
            name = e["name"].split(" (")[0]  # "allreduce bucket 0 (242 KiB)" -> "allreduce bucket 0"
            spans.setdefault(name, []).append((e["ts"] + origin, e["dur"]))
    return spans


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--skip", type=int, default=20, help="warm-up steps to leave out")
    ap.add_argument("--lockstep", action="store_true",
                    help="independent processes: the cost of lock step from their own jitter")
    args = ap.parse_args()
    ranks = [load(p) for p in args.traces]
    for path, spans in zip(args.traces, ranks):
        print(path)
        fwd = spans.get("forward", [])[args.skip:]
        if len(fwd) > 1:
            steps = [b[0] - a[0] for a, b in zip(fwd, fwd[1:])]
            print(f"  {'step':<19} median {statistics.median(steps) / 1000:8.3f} ms  ({len(fwd)} steps)")
        for name in sorted(spans):
            durs = [d for _, d in spans[name][args.skip:]]
            if durs:
                print(f"  {name:<19} median {statistics.median(durs) / 1000:8.3f} ms  "
                      f"p10 {pct(durs, 0.1) / 1000:7.3f}  p90 {pct(durs, 0.9) / 1000:7.3f}")
    if not args.lockstep and len(ranks) > 1 and all("backward" in r for r in ranks):
        ends = [[t + d for t, d in r["backward"][args.skip:]] for r in ranks]
        n = min(len(e) for e in ends)
        skew = [max(e[i] for e in ends) - min(e[i] for e in ends) for i in range(n)]
        print(f"backward end skew between ranks: median {statistics.median(skew) / 1000:.3f} ms, "
              f"p90 {pct(skew, 0.9) / 1000:.3f} ms")
    if args.lockstep and len(ranks) > 1:
        steps = []
        for r in ranks:
            fwd = r.get("forward", [])[args.skip:]
            steps.append([b[0] - a[0] for a, b in zip(fwd, fwd[1:])])
        n = min(len(s) for s in steps)
        if n == 0:
            raise SystemExit("--lockstep: a trace has no steps after the warm-up")
        mean = sum(sum(s[:n]) for s in steps) / (n * len(steps))
        locked = sum(max(s[i] for s in steps) for i in range(n)) / n
        print(f"lock step: mean step {mean / 1000:.3f} ms, slowest of each step {locked / 1000:.3f} ms: "
              f"+{100 * (locked / mean - 1):.1f} %")


if __name__ == "__main__":
    main()
