#!/usr/bin/env python3
"""The `run` half of tools/gpu_check.sh: on the lent GPU machine, within one time budget.

tools/gpu_check.sh run calls this with the Python that has PyTorch (for versions and the PyTorch
benchmark); the runner itself needs only Python 3.8's standard library, no xz and no Bazel.

In order, each step appending to $OUT/summary.txt as it ends, so a run killed at the command limit
still hands back what it found:
 1. the machine: OS, kernel, glibc, CPU, GPU and driver (before anything can fail);
 2. the bundle unpacked with Python's lzma (xz only where Python lacks lzma), and the CUDA
    libraries it resolves with the wheels' nvidia/*/lib folders on LD_LIBRARY_PATH, which is set for
    Colony's binaries only, never for this process, PyTorch or nvidia-smi;
 3. every bundled test binary's *CUDA* tests, counted per test from gtest's JSON report (from its
    output lines when the process died before writing one); the tests a crash or hang kept from
    running are run again in a new process, without the one that was running;
 4. each test that failed, crashed or hung, again alone in its own process with
    COLONY_CUDA_SYNC=1, its output kept from the start (the first error is the one that matters:
    after a device fault every later call in a process fails the same way);
 5. the benchmarks, each only when the time left holds its timeout.

Files under $OUT: summary.txt (the results), gpu_check.log (everything, in order), tests.tsv (one
line per test: binary, test, status, seconds) and logs/ (the output of every process that had a
test fail, crash or hang, and of every debug rerun).
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time

# Each benchmark: (name, argv after the bundle folder, timeout in seconds). One runs only when the
# budget still holds its whole timeout plus the final summary's few seconds.
SUMMARY_RESERVE_S = 10
# Debug reruns start only while this much time is left (one short test and the benchmarks' floor).
RERUN_FLOOR_S = 20
# Lines of a benchmark's output that go into summary.txt.
BENCH_SUMMARY = re.compile(r"^(colony batch|colony-graph batch|pytorch-|allreduce_bench:| +[0-9]+ B )|trains on|"
                           r"images_per_s|tokens_per_s|^colony gpt_gpu|^torch .*device cuda|NOT RUN|exit ")

RUN_LINE = re.compile(r"\[ RUN      \] (\S+)\s*$")
# "[  FAILED  ] Suite.Name (3 ms)"; parameterized tests add ", where GetParam() = ..." after the name.
END_LINE = re.compile(r"\[ +(OK|FAILED|SKIPPED) +\] ([^\s,]+)(?:,.*)? \(\d+ ms\)\s*$")
END_STATUS = {"OK": "passed", "FAILED": "failed", "SKIPPED": "skipped"}
BAD = ("failed", "crashed", "hung")


class Run:
    def __init__(self, out, budget, per_test_timeout):
        self.out = out
        self.t0 = time.monotonic()
        self.budget = budget
        self.per = per_test_timeout
        os.makedirs(os.path.join(out, "logs"), exist_ok=True)
        self.log = open(os.path.join(out, "gpu_check.log"), "a", encoding="utf-8", errors="replace")
        self.summary_path = os.path.join(out, "summary.txt")
        open(self.summary_path, "w").close()
        self.tsv_path = os.path.join(out, "tests.tsv")
        with open(self.tsv_path, "w") as f:
            f.write("binary\ttest\tstatus\tseconds\n")

    def elapsed(self):
        return time.monotonic() - self.t0

    def left(self):
        return self.budget - self.elapsed()

    def say(self, text=""):
        for line in str(text).splitlines() or [""]:
            print(line, flush=True)
            self.log.write(line + "\n")
        self.log.flush()

    def summarize(self, text):
        """A result line: into the log and at once into summary.txt (closed after each line)."""
        self.say(text)
        with open(self.summary_path, "a", encoding="utf-8") as f:
            f.write(text.rstrip("\n") + "\n")

    def record_test(self, binary, test, status, seconds):
        with open(self.tsv_path, "a") as f:
            f.write(f"{binary}\t{test}\t{status}\t{seconds:.1f}\n")


def run_process(argv, env, timeout, log_path):
    """Runs argv with its output into log_path; returns (exit status or None if it timed out, seconds).

    The process gets its own session, so a timeout ends the ranks or workers it started too."""
    start = time.monotonic()
    with open(log_path, "wb") as f:
        try:
            p = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        except OSError as e:
            f.write(f"gpu_check: cannot start {argv[0]}: {e}\n".encode())
            return 127, 0.0
        try:
            rc = p.wait(timeout=max(1, timeout))
        except subprocess.TimeoutExpired:
            for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, None)):
                try:
                    os.killpg(p.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    p.wait(timeout=wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
            p.wait()
            rc = None
    return rc, time.monotonic() - start


def read_text(path, limit=None):
    try:
        with open(path, "rb") as f:
            data = f.read() if limit is None else f.read(limit)
    except OSError:
        return ""
    return data.decode("utf-8", errors="replace")


def exit_text(rc):
    if rc is None:
        return "timed out"
    if rc < 0:
        try:
            return f"killed by {signal.Signals(-rc).name}"
        except ValueError:
            return f"killed by signal {-rc}"
    return f"exit {rc}"


def parse_test_list(text):
    """Full names from --gtest_list_tests ("Suite." lines, then indented names; comments dropped)."""
    names, suite = [], None
    for line in text.splitlines():
        body = line.split("#", 1)[0].rstrip()
        if not body.strip():
            continue
        if not line.startswith(" "):
            suite = body.strip() if body.strip().endswith(".") else None
        elif suite:
            names.append(suite + body.strip())
    # gtest lists disabled tests but does not run them.
    return [n for n in names if not any(part.startswith("DISABLED_") for part in n.split("."))]


def parse_json_report(path):
    """{test: (status, failure text)} from gtest's JSON report, or None if there is none or it is cut short."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    results = {}
    for suite in data.get("testsuites", []):
        for t in suite.get("testsuite", []):
            if t.get("status") == "NOTRUN":
                continue
            name = f"{suite.get('name')}.{t.get('name')}"
            failures = t.get("failures") or []
            if failures:
                results[name] = ("failed", "\n".join(x.get("failure", "") for x in failures))
            elif t.get("result") == "SKIPPED":
                results[name] = ("skipped", "")
            else:
                results[name] = ("passed", "")
    return results


def parse_output(text):
    """From gtest's output lines: ({test: status} of the tests that ended, the test still running)."""
    ended, running = {}, None
    for line in text.splitlines():
        m = RUN_LINE.search(line)
        if m:
            running = m.group(1)
            continue
        m = END_LINE.search(line)
        if m:
            ended[m.group(2)] = END_STATUS[m.group(1)]
            if m.group(2) == running:
                running = None
    return ended, running


def test_output(text, test, max_lines):
    """The lines a test printed, from its [ RUN ] line to its result line (the first error first)."""
    lines, inside = [], False
    for line in text.splitlines():
        if RUN_LINE.search(line) and RUN_LINE.search(line).group(1) == test:
            inside = True
        if inside:
            lines.append(line)
            m = END_LINE.search(line)
            if m and m.group(2) == test:
                break
    if len(lines) > max_lines:
        lines = lines[:max_lines] + [f"... ({len(lines) - max_lines} more lines in the log)"]
    return lines


def safe_name(test):
    return re.sub(r"[^A-Za-z0-9_.-]", "_", test)


def keep_log(run, src, name):
    """Copies a log into $OUT/logs (at most 1 MiB of it: the start, where the first error is)."""
    text = read_text(src, 1 << 20)
    with open(os.path.join(run.out, "logs", name), "w", encoding="utf-8") as f:
        f.write(text)


class Binary:
    def __init__(self, path):
        self.path = path
        self.name = os.path.basename(path)
        self.results = {}  # test -> status
        self.seconds = {}
        self.notes = []  # what went wrong outside any test
        self.expected = []


def run_tests(run, binary, env, logs, sync):
    """Runs one binary's *CUDA* tests until each has a result, a crash or hang ended it, or time ran out."""
    b = binary
    listing = os.path.join(logs, f"{b.name}.list")
    rc, _ = run_process([b.path, "--gtest_list_tests", "--gtest_filter=*CUDA*"], env, 60, listing)
    b.expected = parse_test_list(read_text(listing))
    # A binary that faults at exit lists its tests and then dies: the list still counts (the runs
    # below report the fault).
    if rc != 0 and not b.expected:
        b.notes.append(f"cannot list its tests ({exit_text(rc)}): " + " | ".join(read_text(listing).splitlines()[-5:]))
        keep_log(run, listing, f"{b.name}.list.log")
        return
    if sync:
        env = dict(env, COLONY_CUDA_SYNC="1")
    attempt = 0
    while True:
        pending = [t for t in b.expected if t not in b.results]
        if not pending:
            break
        # Leave the debug reruns and the summary their floor, except for the first process.
        room = run.left() - (RERUN_FLOOR_S if attempt else SUMMARY_RESERVE_S)
        if room < 5:
            for t in pending:
                b.results[t] = "not run"
            b.notes.append(f"{len(pending)} test(s) not run: time budget")
            break
        timeout = min(run.per, room)
        attempt += 1
        tag = f"{b.name}.{attempt}"
        report, log = os.path.join(logs, tag + ".json"), os.path.join(logs, tag + ".log")
        if os.path.exists(report):
            os.remove(report)
        gtest_filter = "*CUDA*" if attempt == 1 else ":".join(pending)
        rc, secs = run_process([b.path, f"--gtest_filter={gtest_filter}", f"--gtest_output=json:{report}"], env,
                               timeout, log)
        text = read_text(log)
        from_report = parse_json_report(report)
        ended, running = parse_output(text)
        if from_report is not None:
            # The report is written after the last test ends, so any other exit than gtest's own
            # (1 when a test failed, else 0) is a fault at exit (static destructors, CUDA's
            # unloading): reported for the binary, no test blamed.
            new = {t: s for t, (s, _) in from_report.items()}
            if rc != (1 if "failed" in new.values() else 0):
                b.notes.append(f"{exit_text(rc)} after its tests ended (process {attempt}; no test blamed)")
        else:
            new = dict(ended)
            if running is not None:
                new[running] = "hung" if rc is None else "crashed"
                b.notes.append(f"{running} {'hung' if rc is None else 'crashed'} ({exit_text(rc)}"
                               f"{', the budget' if rc is None and timeout < run.per else ''})")
            elif rc != (1 if "failed" in new.values() else 0):
                where = "after its tests ended, before its report" if all(t in ended for t in pending) else "between tests"
                b.notes.append(f"{exit_text(rc)} {where} (process {attempt}; no test blamed)")
        progress = False
        for t, s in new.items():
            if t in b.expected and t not in b.results:
                b.results[t] = s
                progress = True
        per_test = {}
        for suite_test, seconds in re.findall(r"\] (\S+?),?(?: where [^(]*)? \((\d+) ms\)", text):
            per_test[suite_test] = int(seconds) / 1000
        for t in new:
            b.seconds[t] = per_test.get(t, secs if len(new) == 1 else 0.0)
        if any(s in BAD for s in new.values()) or rc != 0:
            keep_log(run, log, tag + ".log")
        if not progress:
            # Nothing ran (it died before its first test, or its filter matched nothing): do not loop.
            pending = [t for t in b.expected if t not in b.results]
            for t in pending:
                b.results[t] = "not run"
            b.notes.append(f"{len(pending)} test(s) not run: the process ended ({exit_text(rc)}) before any test"
                           f" ran; output: " + " | ".join(text.splitlines()[-3:]))
            keep_log(run, log, tag + ".log")
            break


def report_binary(run, b, logs):
    counts = {}
    for t in b.expected:
        s = b.results.get(t, "not run")
        counts[s] = counts.get(s, 0) + 1
        run.record_test(b.name, t, s, b.seconds.get(t, 0.0))
    bad = any(counts.get(s) for s in BAD + ("not run",)) or b.notes
    parts = ", ".join(f"{counts.get(s, 0)} {s}" for s in ("passed", "failed", "skipped", "crashed", "hung", "not run")
                      if counts.get(s, 0) or s in ("passed", "failed", "skipped"))
    run.summarize(f"{'FAIL' if bad else 'ok'}   {b.name}: {parts}")
    for note in b.notes:
        run.summarize(f"        {note}")
    for t in b.expected:
        if b.results.get(t) in BAD:
            run.summarize(f"        {b.results[t].upper()} {t}")
    # The failure messages of the first pass, from the log of the process each test ran in.
    for path in sorted(os.listdir(logs)):
        if not (path.startswith(b.name + ".") and path.endswith(".log") and path[len(b.name) + 1:-4].isdigit()):
            continue
        text = read_text(os.path.join(logs, path))
        for t in b.expected:
            if b.results.get(t) == "failed":
                lines = test_output(text, t, 40)
                if lines:
                    run.say("\n".join("    | " + l for l in lines))
            elif b.results.get(t) in ("crashed", "hung"):
                lines = test_output(text, t, 10**9)
                if lines:
                    run.say("\n".join("    | " + l for l in lines[-25:]))


def debug_reruns(run, binaries, env, logs):
    todo = [(b, t) for b in binaries for t in b.expected if b.results.get(t) in BAD]
    if not todo:
        return
    run.say(f"== debug reruns: each test that failed, crashed or hung, alone, with COLONY_CUDA_SYNC=1 ({len(todo)})")
    sync_env = dict(env, COLONY_CUDA_SYNC="1")
    for b, t in todo:
        room = run.left() - SUMMARY_RESERVE_S
        if room < RERUN_FLOOR_S:
            run.summarize(f"NOT RERUN {b.name} {t} (time budget: {run.left():.0f} s left)")
            continue
        log = os.path.join(logs, f"{b.name}.{safe_name(t)}.sync.log")
        rc, secs = run_process([b.path, f"--gtest_filter={t}"], sync_env, min(run.per, room), log)
        text = read_text(log)
        ended, running = parse_output(text)
        status = ended.get(t) or ("hung" if rc is None else "crashed" if running == t else f"no result, {exit_text(rc)}")
        run.summarize(f"rerun {b.name} {t} with COLONY_CUDA_SYNC=1: {status} ({secs:.1f} s, {exit_text(rc)})")
        # The whole output from the test's start: the first error is what matters, so the head is kept.
        lines = test_output(text, t, 200) or text.splitlines()[:200]
        run.say("\n".join("    | " + l for l in lines))
        keep_log(run, log, os.path.basename(log))


def probe(argv, env=None, timeout=30):
    """(exit status, stdout, stderr) of a short command; a missing, failing or hanging one is an answer, not an error."""
    try:
        p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    except (OSError, subprocess.SubprocessError) as e:
        return None, "", f"{argv[0]}: {type(e).__name__}: {e}"


def machine(run, nvidia_smi_env):
    """OS, glibc, CPU, GPU and driver: recorded before anything else can go wrong."""
    osname = "unknown"
    for line in read_text("/etc/os-release").splitlines():
        if line.startswith("PRETTY_NAME="):
            osname = line.split("=", 1)[1].strip('"')
    uname = os.uname()
    glibc = os.confstr("CS_GNU_LIBC_VERSION") if "CS_GNU_LIBC_VERSION" in os.confstr_names else "unknown"
    cpu = next((l.split(":", 1)[1].strip() for l in read_text("/proc/cpuinfo").splitlines()
                if l.startswith("model name")), "unknown")
    run.summarize(f"os: {osname}, kernel {uname.release} {uname.machine}, {glibc}, {os.cpu_count()} CPUs ({cpu})")
    if shutil.which("nvidia-smi") is None:
        run.summarize("gpu: nvidia-smi not found")
        return 0
    rc, out, err = probe(["nvidia-smi", "--query-gpu=name,driver_version,memory.total,compute_cap",
                          "--format=csv,noheader"], nvidia_smi_env)
    gpus = [l for l in out.splitlines() if l.strip()] if rc == 0 else []
    for line in gpus or [(out + err).strip() or f"nvidia-smi exit {rc}"]:
        run.summarize(f"gpu: {line}")
    _, out, _ = probe(["nvidia-smi"], nvidia_smi_env)
    m = re.search(r"CUDA Version: *([0-9.]+)", out)
    run.summarize(f"driver supports CUDA {m.group(1) if m else 'unknown'}")
    return len(gpus)


def gpu_state(run, when):
    """Memory in use and temperature: after the tests, memory still held points at a process left over."""
    if shutil.which("nvidia-smi") is None:
        return
    rc, out, err = probe(["nvidia-smi", "--query-gpu=memory.used,temperature.gpu,clocks.sm", "--format=csv,noheader"],
                         os.environ.copy())
    for line in (out.strip() or err.strip() or f"nvidia-smi exit {rc}").splitlines():
        run.summarize(f"gpu {when}: {line} (memory used, temperature, SM clock)")


def unpack(bundle, dest):
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(dest)
    try:
        import lzma  # noqa: F401  (tarfile's "r:xz" needs it)
    except ImportError:
        if shutil.which("xz") is None:
            sys.exit(f"gpu_check: cannot unpack {bundle}: this Python has no lzma module and there is no xz")
        subprocess.run(["tar", "-C", dest, "-xJf", bundle], check=True)
        return "tar and xz (this Python has no lzma)"
    with tarfile.open(bundle, "r:xz") as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(dest, filter="data")
        else:
            tar.extractall(dest)
    return "Python's lzma"


def nvidia_lib_dirs():
    """The library folders of the pip-installed CUDA stack (PyTorch's nvidia-* wheels) of this Python."""
    import glob
    dirs = []
    try:
        import nvidia  # a namespace package: one root per site-packages that has nvidia wheels
    except ImportError:
        return dirs
    for root in nvidia.__path__:
        for d in sorted(glob.glob(os.path.join(root, "*", "lib")) + glob.glob(os.path.join(root, "*", "lib64"))):
            if d not in dirs and glob.glob(os.path.join(d, "*.so*")):
                dirs.append(d)
    return dirs


def print_torch_info():
    """Run by the Python with PyTorch (--torch-info): its wheel folders, then its versions."""
    print("DIRS=" + ":".join(nvidia_lib_dirs()), flush=True)
    try:
        import torch
        nccl = ".".join(map(str, torch.cuda.nccl.version())) if torch.cuda.is_available() else "n/a"
        print(f"python {sys.version.split()[0]} torch {torch.__version__}: CUDA runtime {torch.version.cuda}, "
              f"cuDNN {torch.backends.cudnn.version()}, NCCL {nccl}, GPU visible to torch: {torch.cuda.is_available()}")
    except Exception as e:  # what went wrong is the answer, whatever it is
        print(f"python {sys.version.split()[0]}: no PyTorch ({type(e).__name__}: {e})")


def torch_info(run, py):
    """PyTorch's versions and its wheels' library folders (what Colony's binaries load CUDA from)."""
    rc, out, err = probe([py, os.path.abspath(__file__), "--torch-info"], timeout=120)  # importing torch takes a while
    dirs = ""
    for line in out.splitlines():
        if line.startswith("DIRS="):
            dirs = line[5:]
        else:
            run.summarize(line)
    if rc != 0:
        run.summarize(f"python: {py} {'exit ' + str(rc) if rc is not None else 'failed'}: {err.strip()[-300:]}")
    return dirs


def libraries(run, work, env):
    """The CUDA libraries the bundle resolves, and any it cannot find (then nothing would start)."""
    bins = sorted(os.listdir(os.path.join(work, "bin"))) if os.path.isdir(os.path.join(work, "bin")) else []
    candidates = [os.path.join(work, "lenet_gpu")] + [os.path.join(work, "bin", b) for b in bins]
    probe_bin = next((c for c in candidates if os.path.exists(c)), None)
    if probe_bin is None or shutil.which("ldd") is None:
        return
    _, out, _ = probe(["ldd", probe_bin], env)
    for line in out.splitlines():
        if re.match(r"\s*lib(cuda|cudart|cublas|cublasLt|cudnn|nccl)\.so\.[0-9]+ ", line):
            run.say(f"{os.path.basename(probe_bin)} resolves {line.strip()}")
        if "not found" in line and "libcuda.so.1" not in line:
            run.summarize(f"MISSING library for {os.path.basename(probe_bin)}: {line.strip()}")


def benchmarks(run, work, env, py, gpus, repo):
    ranks = max(2, gpus)
    lenet = os.path.join(work, "lenet_cifar10")
    plan = [
        ("benchmarks/lenet_gpu", [os.path.join(work, "lenet_gpu")], 90, env),
        ("benchmarks/lenet_gpu --cuda_graph", [os.path.join(work, "lenet_gpu"), "--cuda_graph"], 60, env),
        ("benchmarks/lenet_gpu_pytorch.py", [py, "-u", os.path.join(repo, "benchmarks", "lenet_gpu_pytorch.py")], 150,
         None),
        # The GPT-2-small shape under bfloat16 autocast (#32's GPU goal: >= 1.1x torch.compile's tokens/s).
        ("benchmarks/gpt_gpu", [os.path.join(work, "gpt_gpu")], 90, env),
        ("benchmarks/gpt_pytorch.py --device cuda --config gpt2 --amp bf16 --compile",
         [py, "-u", os.path.join(repo, "benchmarks", "gpt_pytorch.py"), "--device", "cuda", "--config", "gpt2",
          "--amp", "bf16", "--steps", "20", "--warmup", "5", "--compile"], 240, None),
        ("benchmarks/gpt_pytorch.py --device cuda --config gpt2 --amp bf16",
         [py, "-u", os.path.join(repo, "benchmarks", "gpt_pytorch.py"), "--device", "cuda", "--config", "gpt2",
          "--amp", "bf16", "--steps", "20", "--warmup", "5"], 90, None),
        ("benchmarks/allreduce_bench --device cuda", [os.path.join(work, "allreduce_bench"), "--device", "cuda"], 40, env),
        (f"lenet_cifar10 --device cuda under colonyrun ({ranks} ranks, {gpus} GPU(s))",
         [os.path.join(work, "colonyrun"), f"--nproc_per_node={ranks}", "--master_port=0", lenet, "--device", "cuda",
          "--epochs", "1", "--max_steps", "60", "--workers", "0", "--benchmark", "--warmup_steps", "10",
          "--checkpoint", "/tmp/gpu_check_lenet.safetensors"], 60, env),
    ]
    for title, argv, timeout, child_env in plan:
        run.say(f"== {title}")
        if not os.path.exists(argv[0]):
            run.summarize(f"{title}: NOT RUN (not in the bundle)")
            continue
        if run.left() - SUMMARY_RESERVE_S < timeout:
            run.summarize(f"{title}: NOT RUN (time budget: {run.left():.0f} s left, it may take {timeout} s)")
            continue
        log = os.path.join(run.out, "logs", safe_name(title.split(" (")[0]) + ".log")
        rc, secs = run_process(argv, child_env if child_env is not None else os.environ.copy(), timeout, log)
        text = read_text(log)
        run.say(text.rstrip())
        for line in text.splitlines():
            if BENCH_SUMMARY.search(line):
                run.summarize(line)
        if rc != 0:
            run.summarize(f"{title}: {exit_text(rc)} after {secs:.0f} s")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bundle", help="bundle.tar.xz made by tools/gpu_check.sh build")
    ap.add_argument("--out", help="where the files that come back go ($OUT)")
    ap.add_argument("--python", default=sys.executable, help="the Python with PyTorch")
    ap.add_argument("--work", default="/tmp/gpu_check_bundle", help="where the bundle is unpacked")
    ap.add_argument("--budget", type=float, default=420, help="seconds for the whole run")
    ap.add_argument("--timeout", type=float, default=60, help="seconds for one test process")
    ap.add_argument("--sync", action="store_true", help="COLONY_CUDA_SYNC=1 for every test process")
    ap.add_argument("--only", metavar="REGEX", help="only the test binaries whose name matches (a rerun after a fix)")
    ap.add_argument("--no-benchmarks", action="store_true")
    # Helpers for tools/gpu_check.sh, so that each thing is done in one place.
    ap.add_argument("--unpack-only", action="store_true", help="unpack --bundle into --work and stop")
    ap.add_argument("--nvidia-lib-dirs", action="store_true", help="print this Python's nvidia/*/lib folders")
    ap.add_argument("--torch-info", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.nvidia_lib_dirs:
        print(":".join(nvidia_lib_dirs()))
        return 0
    if args.torch_info:
        print_torch_info()
        return 0
    if args.unpack_only:
        print(f"unpacked {args.bundle} into {args.work} with {unpack(args.bundle, args.work)}")
        return 0
    if not args.bundle or not args.out:
        ap.error("--bundle and --out are required")

    run = Run(args.out, args.budget, args.timeout)
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    run.say(f"== gpu_check {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}: budget {args.budget:.0f} s, "
            f"{args.timeout:.0f} s per test process{', COLONY_CUDA_SYNC=1 throughout' if args.sync else ''}")
    gpus = machine(run, os.environ.copy())
    if not os.path.isfile(args.bundle):
        run.summarize(f"gpu_check: no bundle at {args.bundle}; run 'tools/gpu_check.sh build' on a build machine first")
        return 1
    how = unpack(args.bundle, args.work)
    run.say(f"unpacked {args.bundle} into {args.work} with {how} ({run.elapsed():.1f} s)")
    nv = torch_info(run, args.python)
    # Only Colony's processes get the bundle's libraries and the wheels' CUDA libraries.
    lib_path = ":".join(p for p in (os.path.join(args.work, "lib"), nv, os.environ.get("LD_LIBRARY_PATH", "")) if p)
    colony_env = dict(os.environ, LD_LIBRARY_PATH=lib_path)
    run.say(f"LD_LIBRARY_PATH for Colony's binaries: {lib_path}")
    libraries(run, args.work, colony_env)

    logs = os.path.join(args.work, "..", os.path.basename(args.work) + "_logs")
    shutil.rmtree(logs, ignore_errors=True)
    os.makedirs(logs)
    bin_dir = os.path.join(args.work, "bin")
    names = sorted(os.listdir(bin_dir)) if os.path.isdir(bin_dir) else []
    binaries = [Binary(os.path.join(bin_dir, n)) for n in names if not args.only or re.search(args.only, n)]
    run.say(f"== tests: {len(binaries)} binaries, --gtest_filter='*CUDA*', at most {args.timeout:.0f} s per process")
    for b in binaries:
        if run.left() - SUMMARY_RESERVE_S < RERUN_FLOOR_S:
            b.notes.append("not run: time budget")
        else:
            run_tests(run, b, colony_env, logs, args.sync)
        report_binary(run, b, logs)
    totals = {}
    for b in binaries:
        for t in b.expected:
            s = b.results.get(t, "not run")
            totals[s] = totals.get(s, 0) + 1
    broken = sum(1 for b in binaries if b.notes)
    line = ", ".join(f"{totals.get(s, 0)} {s}" for s in ("passed", "failed", "skipped", "crashed", "hung", "not run"))
    run.summarize(f"tests: {line}; {broken} binaries with faults outside a test or not run ({run.elapsed():.0f} s)")

    gpu_state(run, "after the tests")
    if not args.sync:
        debug_reruns(run, binaries, colony_env, logs)
    if not args.no_benchmarks:
        benchmarks(run, args.work, colony_env, args.python, gpus, repo)
    run.summarize(f"gpu_check {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}: {line}; "
                  f"{broken} binaries with faults outside a test ({run.elapsed():.0f} s of {args.budget:.0f})")
    print("== summary.txt\n" + read_text(run.summary_path), end="", flush=True)  # the tail a caller sees
    if totals.get("passed", 0) == 0:
        run.summarize("gpu_check: no CUDA test passed (every one skipped: is the GPU visible to this process?)")
        return 1
    return 1 if broken or any(totals.get(s) for s in BAD + ("not run",)) else 0


if __name__ == "__main__":
    sys.exit(main())
