#!/usr/bin/env python3
"""What the calling thread runs while the CPU thread pool's workers spin: the serial stretches of
a multithreaded CPU run, by op, from a perf profile with DWARF call stacks.

  perf record -F 2000 --call-graph dwarf,16384 -o /tmp/gpt.data \\
      .bazel/bin/benchmarks/gpt_cpu --threads 2 --steps 100 --warmup 5
  perf script -i /tmp/gpt.data -F tid,time,ip,sym > /tmp/gpt.txt
  python3 tools/pool_profile.py /tmp/gpt.txt [--start-frame TrainStep] [--top 30]

It prints
- the main thread's samples by class: `chunk` (running a parallel_for chunk), `wait` (inside
  parallel_for, waiting for the workers), `wake` (waking parked workers), `small` (a parallel_for too small to split, run on the
  caller), `serial` (anything else: dispatch, autograd, allocation), `no-unwind` (perf could not
  walk the stack);
- the workers' samples: running a chunk or spinning (the pool's spin-wait, sched_yield included);
- for each worker sample that spins, the class of the main thread's nearest sample (within
  0.6 ms; none: the main thread was not running, e.g. preempted on a busy machine);
- the main thread's `serial` and `small` samples by op: the innermost Colony frame and the op the
  model code or the autograd engine called.
Samples before the first one whose stack holds --start-frame (the training step) are left out.
Only the Python standard library is used.
"""
import argparse
import bisect
import collections
import re

CHUNK = 'parallel_for(long, long, std::function<void (long, long)> const&)::{lambda(int)#1}'
OP = re.compile(r'^(ops|nn|optim|autograd|kernels|Tensor|raw|char_gpt)')
OUTER = re.compile(r'^(nn::|optim::|autograd::backward|char_gpt::|Tensor::backward)')
POOL_LEAF = ('ThreadPool', 'spin_until', 'clock_gettime', 'sched_yield', 'parallel_for', 'futex')


def read_samples(path):
    samples, cur = [], None
    for line in open(path, errors='replace'):
        if not line.strip():
            if cur:
                samples.append(cur)
            cur = None
        elif not line[0].isspace():
            parts = line.split()
            cur = (int(parts[0]), float(parts[1].rstrip(':')), [])
        elif cur is not None:
            fields = line.strip().split(' ', 1)
            cur[2].append(fields[1] if len(fields) > 1 else '?')
    if cur:
        samples.append(cur)
    return samples


def short(frame):
    frame = frame.replace('(anonymous namespace)::', '').replace('colony::', '')
    if not frame.startswith('std::_Function_handler'):
        frame = re.sub(r'\(.*', '', frame)
    return frame[:100]


def classify(stack):
    """(class, label) of one main-thread sample."""
    if len(stack) <= 2:
        return 'no-unwind', short(stack[0]) if stack else '?'
    names = [short(f) for f in stack]
    if any(CHUNK in f for f in stack):
        i = max(k for k, f in enumerate(stack) if CHUNK in f)
        above = [f for f in names[i + 1:] if OP.match(f) and 'parallel_for' not in f]
        return 'chunk', (above[0] if above else '?')
    pf = [k for k, f in enumerate(stack) if f.startswith('colony::kernels::cpu::parallel_for')]
    if pf:
        k = pf[0]
        if any('pthread' in f for f in stack[:k]):
            return 'wake', ''  # the caller waking parked workers (futex through the condition variable)
        if all(any(p in f for p in POOL_LEAF) or f.startswith('ffff') or 'syscall' in f.lower()
               for f in stack[:k]):
            return 'wait', ''
        above = [f for f in names[k + 1:] if OP.match(f)]
        return 'small', (above[0] if above else '?') + ' | ' + names[k - 1][:70]
    ops = [f for f in names if OP.match(f) and 'Engine' not in f and 'Execution' not in f]
    outer = [f for f in ops if OUTER.match(f)]
    return 'serial', (ops[0] if ops else names[0]) + '  @  ' + ' < '.join(outer[:2])


def worker_spins(stack):
    if any(CHUNK in f for f in stack):
        return False
    return any('ensure_workers' in f or 'worker_loop' in f or 'sched_yield' in f or 'clock_gettime' in f
               for f in stack[:12])


def shares(counter):
    total = sum(counter.values()) or 1
    return ', '.join('%s %d (%.1f %%)' % (k, v, 100.0 * v / total) for k, v in counter.most_common())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('script', help='output of perf script -F tid,time,ip,sym')
    ap.add_argument('--start-frame', default='TrainStep', help='leave out samples before the first with this frame')
    ap.add_argument('--top', type=int, default=30)
    args = ap.parse_args()
    samples = read_samples(args.script)
    main_tid = min(t for t, _, _ in samples)
    starts = [tm for t, tm, st in samples if t == main_tid and any(args.start_frame in f for f in st)]
    t0 = min(starts) if starts else 0.0
    main_samples = sorted((tm, st) for t, tm, st in samples if t == main_tid and tm >= t0)
    times = [tm for tm, _ in main_samples]
    labels = [classify(st) for _, st in main_samples]
    print('main thread:', shares(collections.Counter(c for c, _ in labels)))
    workers, during = collections.Counter(), collections.Counter()
    for t, tm, st in samples:
        if t == main_tid or tm < t0:
            continue
        spin = worker_spins(st)
        workers['spin' if spin else 'chunk or other'] += 1
        if not spin:
            continue
        i = bisect.bisect_left(times, tm)
        near = [j for j in (i - 1, i) if 0 <= j < len(times)]
        j = min(near, key=lambda j: abs(times[j] - tm)) if near else None
        during['main not running' if j is None or abs(times[j] - tm) > 0.0006 else labels[j][0]] += 1
    print('workers:', shares(workers))
    print('main thread while a worker spins:', shares(during))
    ops = collections.Counter(c + '  ' + l for c, l in labels if c in ('serial', 'small'))
    print('main-thread samples outside chunks, by op (%% of all %d main-thread samples):' % len(labels))
    for k, v in ops.most_common(args.top):
        print('%6d %6.2f %%  %s' % (v, 100.0 * v / len(labels), k[:200]))


if __name__ == '__main__':
    main()
