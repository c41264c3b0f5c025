#!/usr/bin/env python3
"""Resident memory of `hearth serve` while it takes a large import through `POST /v1/commit`.

A fresh server takes DOCUMENTS documents (the six fields and two-element array of `query_bench.py scale`, nine
in ten in `items`, one in ten in `notes` under 1,000 owners) in commits of BATCH `set` writes on CONNECTIONS
connections. Its RSS (`/proc/PID/status` VmRSS) is printed every EVERY documents and after IDLE seconds with no
writes, with the growth over its RSS after the first 10,000 documents; the run fails (exit status 1) when that
growth reaches LIMIT MiB, the bound `MemoryBoundTests` checks at 200,000 documents. Loopback only.

    python3 bench/memory_bench.py [--documents 1000000] [--batch 500] [--connections 2] [--every 50000]
                                  [--limit 64] [--binary PATH] [--serve-arg=--some-flag ...]
"""
import argparse, json, os, random, shutil, subprocess, sys, tempfile, threading, time
from http.client import HTTPConnection

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from docs_bench import ADMIN_KEY, built, free_port, stop, wait_up  # noqa: E402

BASELINE_DOCUMENTS = 10_000


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise SystemExit(f"no VmRSS for pid {pid}")


def document(i, rng):
    path = f"owners/o{i % 1000}/notes/n{i:08d}" if i % 10 == 0 else f"items/i{i:08d}"
    return {"set": path, "data": {"cat": f"c{i % 100}", "score": rng.randrange(1_000_000), "n": i,
                                  "tags": [f"t{rng.randrange(200)}", f"t{rng.randrange(200)}"],
                                  "title": f"item {i}", "flag": i % 3 == 0}}


class Loader:
    """Sends commits of `batch` writes for documents [start, end) on `connections` connections."""

    def __init__(self, port, batch, connections):
        self.port, self.batch, self.connections = port, batch, connections

    def load(self, start, end):
        lock = threading.Lock()
        starts = iter(range(start, end, self.batch))
        failure = []

        def worker(seed):
            rng = random.Random(seed)
            conn = HTTPConnection("127.0.0.1", self.port, timeout=120)
            headers = {"Authorization": f"Bearer {ADMIN_KEY}", "Content-Type": "application/json"}
            while not failure:
                with lock:
                    first = next(starts, None)
                if first is None:
                    break
                body = json.dumps({"writes": [document(i, rng) for i in range(first, min(end, first + self.batch))]})
                conn.request("POST", "/v1/commit", body, headers)
                r = conn.getresponse()
                data = r.read()
                if r.status != 200:
                    failure.append(f"commit failed: {r.status} {data[:200]!r}")
            conn.close()

        threads = [threading.Thread(target=worker, args=(start * 31 + k,)) for k in range(self.connections)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if failure:
            raise SystemExit(failure[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--documents", type=int, default=1_000_000)
    ap.add_argument("--batch", type=int, default=500)
    ap.add_argument("--connections", type=int, default=2)
    ap.add_argument("--every", type=int, default=50_000)
    ap.add_argument("--idle", type=float, default=3)
    ap.add_argument("--limit", type=float, default=64, help="MiB of growth over the RSS after the first 10,000 documents")
    ap.add_argument("--binary", default=None, help="a hearth binary (default: this checkout's release build)")
    ap.add_argument("--serve-arg", action="append", default=[], help="one more argument for `hearth serve` (repeatable)")
    args = ap.parse_args()
    binary = args.binary or built()
    tmp = tempfile.mkdtemp(prefix="hearth-memory-")
    port = free_port()
    proc = subprocess.Popen([binary, "serve", "--data", os.path.join(tmp, "data"), "--port", str(port),
                             "--log-level", "warning"] + args.serve_arg,
                            env=dict(os.environ, HEARTH_ADMIN_KEY=ADMIN_KEY), stdout=subprocess.DEVNULL)
    try:
        wait_up(f"http://127.0.0.1:{port}/healthz")
        loader = Loader(port, args.batch, args.connections)
        started = rss_mib(proc.pid)
        print(f"{' '.join(args.serve_arg) or 'defaults'}; {args.documents:,} documents in commits of {args.batch} on "
              f"{args.connections} connections; RSS at start {started:.0f} MiB; load average {os.getloadavg()[0]:.1f}", flush=True)
        t0 = time.monotonic()
        loader.load(0, BASELINE_DOCUMENTS)
        baseline = rss_mib(proc.pid)
        print(f"{BASELINE_DOCUMENTS:>10,} documents  RSS {baseline:6.0f} MiB  (the baseline)", flush=True)
        worst = 0.0
        written = BASELINE_DOCUMENTS
        marks = list(range(args.every, args.documents, args.every)) + [args.documents]
        for mark in marks:
            if mark <= written:
                continue
            loader.load(written, mark)
            written = mark
            rss = rss_mib(proc.pid)
            worst = max(worst, rss - baseline)
            rate = written / (time.monotonic() - t0)
            print(f"{written:>10,} documents  RSS {rss:6.0f} MiB  growth {rss - baseline:+6.0f} MiB  ({rate:,.0f} documents/s so far)",
                  flush=True)
        time.sleep(args.idle)
        rss = rss_mib(proc.pid)
        worst = max(worst, rss - baseline)
        print(f"{written:>10,} documents, {args.idle:.0f} s idle  RSS {rss:6.0f} MiB  growth {rss - baseline:+6.0f} MiB", flush=True)
        ok = worst < args.limit
        print(f"largest growth {worst:.0f} MiB over the baseline: {'within' if ok else 'NOT within'} {args.limit:.0f} MiB")
        sys.exit(0 if ok else 1)
    finally:
        stop([proc])
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
