#!/usr/bin/env python3
"""`hearth import` of a generated NDJSON file into a fresh data folder: documents per second, CPU per document
(the process's, and its busiest thread's: the store's writer, whose CPU bounds the rate on a machine with a core
for it), and peak RSS.

Shapes: `bench` is the ~300-byte document of docs_bench.py (four fields, its title and count its own), `scale`
the six fields and two-element array of query_bench.py scale (a random score and tags, so that its rows land
all over the index), nine in ten in `items` and one in ten under one of 1,000 owners. Each size is imported
ROUNDS times, each into a fresh folder; the file is written once per shape and size, outside the timing.
With --baseline, an older build imports the same file in each round too, before this one, so that builds are
compared within one run on a machine whose load changes.

    python3 bench/import_bench.py [--sizes 100000,1000000] [--shapes bench,scale] [--rounds 2] [--batch N]
                                  [--binary PATH] [--baseline PATH]
"""
import argparse, json, os, random, resource, shutil, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from docs_bench import built  # noqa: E402


def write_file(path, shape, n):
    rng = random.Random(7)
    with open(path, "w") as f:
        for i in range(n):
            if shape == "bench":
                doc = {"path": f"bench/b{i:014d}",
                       "data": {"title": f"A day at the lake, part {i}", "count": i, "published": i % 2 == 0, "body": "lorem ipsu" * 20}}
            else:
                doc = {"path": f"owners/o{i % 1000}/notes/n{i:08d}" if i % 10 == 0 else f"items/i{i:08d}",
                       "data": {"cat": f"c{i % 100}", "score": rng.randrange(1_000_000), "n": i,
                                "tags": [f"t{rng.randrange(200)}", f"t{rng.randrange(200)}"], "title": f"item {i}", "flag": i % 3 == 0}}
            f.write(json.dumps(doc) + "\n")


def peak_rss_mib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def thread_cpu(pid, seen):
    """Updates `seen` (thread id: CPU seconds, user and system) from /proc/PID/task: the busiest thread's CPU is
    the writer's, which bounds the rate when the other threads have a core of their own."""
    tick = os.sysconf("SC_CLK_TCK")
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            seen[tid] = (int(fields[11]) + int(fields[12])) / tick
    except OSError:
        pass


def run(binary, file, folder, batch):
    """Imports `file` into `folder`; answers (seconds, peak RSS in MiB, CPU seconds, busiest thread's CPU
    seconds) of the import."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    args = [binary, "import", file, "--data", folder] + (["--batch", str(batch)] if batch else [])
    t0 = time.monotonic()
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    peak = 0.0
    threads = {}
    while proc.poll() is None:
        peak = max(peak, peak_rss_mib(proc.pid))  # VmHWM: the peak so far, read until the process ends
        thread_cpu(proc.pid, threads)
        time.sleep(0.05)
    seconds = time.monotonic() - t0
    err = proc.stderr.read()
    if proc.returncode != 0:
        raise SystemExit(f"import failed ({proc.returncode}): {err[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return seconds, peak, cpu, max(threads.values(), default=0.0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--shapes", default="bench,scale")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--batch", type=int, default=None)
    ap.add_argument("--binary", default=None)
    ap.add_argument("--baseline", default=None, help="an older build, run before this one in every round")
    args = ap.parse_args()
    builds = [("this", args.binary or built())]
    if args.baseline:
        builds.insert(0, ("baseline", args.baseline))
    tmp = tempfile.mkdtemp(prefix="hearth-import-")
    try:
        print(f"load average {os.getloadavg()[0]:.1f}", flush=True)
        rows = []
        for shape in args.shapes.split(","):
            for n in (int(s) for s in args.sizes.split(",")):
                file = os.path.join(tmp, f"{shape}-{n}.ndjson")
                write_file(file, shape, n)
                for k in range(args.rounds):
                    for name, binary in builds:
                        folder = os.path.join(tmp, f"data-{shape}-{n}-{k}-{name}")
                        seconds, rss, cpu, busiest = run(binary, file, folder, args.batch)
                        label = f"{name:8} " if args.baseline else ""
                        print(f"{label}{shape:5} {n:>9,} documents: {seconds:6.1f} s, {n / seconds:8,.0f}/s, CPU {cpu:6.1f} s "
                              f"({cpu / n * 1e6:.1f} µs a document; busiest thread {busiest / n * 1e6:.1f} µs), "
                              f"peak RSS {rss:.0f} MiB, load average {os.getloadavg()[0]:.1f}", flush=True)
                        rows.append((name, shape, n, n / seconds, cpu / n * 1e6, busiest / n * 1e6))
                        shutil.rmtree(folder, ignore_errors=True)
                os.remove(file)
        print("\n| build | shape | documents | documents/s (each round) | CPU µs a document | busiest thread µs a document |"
              "\n|---|---|---|---|---|---|")
        for name, _ in builds:
            for shape in args.shapes.split(","):
                for n in (int(s) for s in args.sizes.split(",")):
                    mine = [(r, c, w) for b, s, m, r, c, w in rows if b == name and s == shape and m == n]
                    rates = ", ".join(f"{r:,.0f}" for r, _, _ in mine)
                    cpus = ", ".join(f"{c:.1f}" for _, c, _ in mine)
                    busiest = ", ".join(f"{w:.1f}" for _, _, w in mine)
                    print(f"| {name} | {shape} | {n:,} | {rates} | {cpus} | {busiest} |")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
