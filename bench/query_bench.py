#!/usr/bin/env python3
"""Query benchmarks on loopback; every run is bounded in time and stops by itself.

compare: Hearth and PocketBase side by side in one run. A filtered list over 30,000 documents
    (`published == true` and `views >= 5`, ordered by `views` descending, 20 results), 16 connections, wrk.
    PocketBase gets an index on (published, views) and Hearth the composite index (published, views desc)
    from INDEXES, so that both servers answer from a composite index (--no-indexes: Hearth without it).

    python3 bench/query_bench.py compare [--duration 10] [--rounds 2] [--connections 16] [--no-indexes]
        [--baseline BINARY]   # also an older build, loaded the same way, for before-and-after in one run

scale: one Hearth server loaded to 10k, 100k and 1M documents in turn (the same data folder, growing);
    at each size, the median and p99 latency of index-served queries (one connection, sequential), the
    load time and the server's peak RSS. Hearth keeps the composite index (cat, score desc) of INDEXES
    (--no-indexes: single-field indexes only).

    python3 bench/query_bench.py scale [--sizes 10000,100000,1000000] [--requests 200] [--no-indexes]

writecost: CPU time the server spends per create (wrk, 16 connections, the ~300-byte document of
    docs_bench.py), from /proc/PID/stat over the run; run it with two binaries to see what indexing costs.

    python3 bench/query_bench.py writecost [--binary .build/release/hearth] [--duration 10] [--rounds 3]
"""
from http.client import HTTPConnection
import argparse, json, os, random, shutil, signal, socket, statistics, subprocess, sys, tempfile, time, urllib.parse
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from docs_bench import ADMIN_KEY, ROOT, built, free_port, http, launch_pocketbase, stop, wait_up  # noqa: E402

LUA = os.path.join(ROOT, "bench", "lua", "query.lua")
AUTH = {"Authorization": f"Bearer {ADMIN_KEY}"}


def check_alive(proc, name):
    """Fails when the server exited (say, its port was taken), so no request reaches another process."""
    time.sleep(0.5)
    if proc.poll() is not None:
        raise SystemExit(f"{name} exited with status {proc.returncode}")


# The composite indexes the workloads' queries use, as a project declares them (firestore.indexes.json):
# PocketBase's side of the comparison gets the same (published, views) index as a SQL index.
INDEXES = {"indexes": [
    {"collectionGroup": "bench", "queryScope": "COLLECTION",
     "fields": [{"fieldPath": "published", "order": "ASCENDING"}, {"fieldPath": "views", "order": "DESCENDING"}]},
    {"collectionGroup": "items", "queryScope": "COLLECTION",
     "fields": [{"fieldPath": "cat", "order": "ASCENDING"}, {"fieldPath": "score", "order": "DESCENDING"}]},
]}


def start_hearth(tmp, port, binary=None, indexes=True):
    binary = binary or built()
    env = dict(os.environ, HEARTH_ADMIN_KEY=ADMIN_KEY, HEARTH_SYNCHRONOUS="NORMAL")
    extra = []
    if indexes:
        path = os.path.join(tmp, "firestore.indexes.json")
        with open(path, "w") as f:
            json.dump(INDEXES, f)
        extra = ["--indexes", path]
    proc = subprocess.Popen([binary, "serve", "--data", os.path.join(tmp, "hearth"), "--port", str(port), "--log-level", "warning"]
                            + extra, env=env, stdout=subprocess.DEVNULL)
    check_alive(proc, "hearth")
    wait_up(f"http://127.0.0.1:{port}/healthz")
    return proc, f"http://127.0.0.1:{port}"


def peak_rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def commit_all(base, docs, batch=500, threads=2):
    """Writes (path, data) pairs in commits of `batch` writes."""
    def send(chunk):
        http("POST", f"{base}/v1/commit", {"writes": [{"set": p, "data": d} for p, d in chunk]}, AUTH)
    chunks = [docs[i:i + batch] for i in range(0, len(docs), batch)]
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(send, chunks))


def wrk(base, env, duration, connections):
    out = subprocess.run(["wrk", "-t2", f"-c{connections}", f"-d{duration}s", "-s", LUA, base],
                         env=dict(os.environ, **env), capture_output=True, text=True, timeout=duration + 60).stdout
    line = next(l for l in out.splitlines() if l.startswith("RESULT"))
    return {k: float(v) for k, v in (kv.split("=") for kv in line.split()[1:])}


# --- compare -------------------------------------------------------------------------------------------

N_COMPARE = 30_000


def compare_doc(i):
    return {"title": f"A day at the lake, part {i}", "views": (i * 7919) % 1000, "published": i % 2 == 0, "body": "lorem ipsu" * 20}


FILTERED_QUERY = {"from": "bench", "where": [["published", "==", True], ["views", ">=", 5]],
                  "orderBy": [{"field": "views", "direction": "desc"}], "limit": 20}


def start_pocketbase(tmp, port):
    proc, base, _ = launch_pocketbase(tmp, port, {
        "name": "bench",
        "fields": [{"name": "title", "type": "text"}, {"name": "views", "type": "number"},
                   {"name": "published", "type": "bool"}, {"name": "body", "type": "text"}],
        "indexes": ["CREATE INDEX idx_bench_published_views ON bench (published, views)"]})
    check_alive(proc, "pocketbase")

    def create(i):
        http("POST", f"{base}/api/collections/bench/records", {"id": f"b{i:014d}", **compare_doc(i)})
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(create, range(1, N_COMPARE + 1)))
    return proc, base


def compare(args):
    tmp = tempfile.mkdtemp(prefix="hearth-qbench-")
    procs = []
    try:
        h_proc, h_base = start_hearth(tmp, free_port(), indexes=not args.no_indexes); procs.append(h_proc)
        commit_all(h_base, [(f"bench/b{i:014d}", compare_doc(i)) for i in range(1, N_COMPARE + 1)])
        servers = [("hearth", h_base)]
        if args.baseline:
            b_tmp = os.path.join(tmp, "baseline")
            os.makedirs(b_tmp)
            b_proc, b_base = start_hearth(b_tmp, free_port(), os.path.abspath(args.baseline), indexes=not args.no_indexes)
            procs.append(b_proc)
            commit_all(b_base, [(f"bench/b{i:014d}", compare_doc(i)) for i in range(1, N_COMPARE + 1)])
            servers.append(("baseline", b_base))
        p_proc, p_base = start_pocketbase(tmp, free_port()); procs.append(p_proc)
        pb_filter = urllib.parse.quote("published=true && views>=5")
        envs = {
            "hearth": dict(BENCH_METHOD="POST", BENCH_PATH="/v1/query", BENCH_BODY=json.dumps(FILTERED_QUERY),
                           BENCH_AUTH=f"Bearer {ADMIN_KEY}"),
            "baseline": dict(BENCH_METHOD="POST", BENCH_PATH="/v1/query", BENCH_BODY=json.dumps(FILTERED_QUERY),
                             BENCH_AUTH=f"Bearer {ADMIN_KEY}"),
            "pocketbase": dict(BENCH_METHOD="GET",
                               BENCH_PATH=f"/api/collections/bench/records?filter={pb_filter}&sort=-views&perPage=20&skipTotal=1"),
        }
        # Both answer the same 20 documents.
        h_ids = [d["id"] for d in http("POST", f"{h_base}/v1/query", FILTERED_QUERY, AUTH)["documents"]]
        p_items = http("GET", p_base + envs["pocketbase"]["BENCH_PATH"])["items"]
        print(f"hearth first ids {h_ids[:3]}, pocketbase first ids {[i['id'] for i in p_items[:3]]}; "
              f"views hearth {[http('GET', f'{h_base}/v1/docs/bench/{i}', headers=AUTH)['data']['views'] for i in h_ids[:3]]} "
              f"pocketbase {[i['views'] for i in p_items[:3]]}", flush=True)
        print(f"{N_COMPARE} documents; Hearth composite index (published, views desc): {'no' if args.no_indexes else 'yes'}; "
              f"{args.connections} connections, {args.duration} s per run, {args.rounds} rounds, "
              f"load average {os.getloadavg()[0]:.1f}", flush=True)
        results = {}
        for _ in range(args.rounds):
            for name, base in servers + [("pocketbase", p_base)]:
                r = wrk(base, envs[name], args.duration, args.connections)
                results.setdefault(name, []).append(r)
                print(f"filtered-list {name:10} {r['rps']:9.0f} req/s  p50 {r['p50_ms']:.2f} ms  p99 {r['p99_ms']:.2f} ms  "
                      f"errors {int(r['non2xx'])}", flush=True)
        h = statistics.median(r["rps"] for r in results["hearth"])
        p = statistics.median(r["rps"] for r in results["pocketbase"])
        print()
        print("| workload | Hearth req/s | PocketBase req/s | ratio | Hearth p99 ms | PocketBase p99 ms |")
        print("|---|---|---|---|---|---|")
        print(f"| filtered list | {h:.0f} | {p:.0f} | {h / p:.2f}x | "
              f"{statistics.median(r['p99_ms'] for r in results['hearth']):.2f} | "
              f"{statistics.median(r['p99_ms'] for r in results['pocketbase']):.2f} |")
        if args.baseline:
            b = statistics.median(r["rps"] for r in results["baseline"])
            print(f"\nthis build / the baseline: {h / b:.3f} (baseline {b:.0f} req/s, "
                  f"p99 {statistics.median(r['p99_ms'] for r in results['baseline']):.2f} ms)")
    finally:
        stop(procs)
        shutil.rmtree(tmp, ignore_errors=True)


# --- scale ---------------------------------------------------------------------------------------------

def scale_doc(i, rng):
    return {"cat": f"c{i % 100}", "score": rng.randrange(1_000_000), "n": i,
            "tags": [f"t{rng.randrange(200)}", f"t{rng.randrange(200)}"], "title": f"item {i}", "flag": i % 3 == 0}


def scale_docs(start, end, rng):
    """Documents start..<end: nine in ten in `items`, one in ten in `notes` under one of 1,000 owners."""
    out = []
    for i in range(start, end):
        path = f"owners/o{i % 1000}/notes/n{i:08d}" if i % 10 == 0 else f"items/i{i:08d}"
        out.append((path, scale_doc(i, rng)))
    return out


SCALE_QUERIES = [
    ("equality + orderBy + limit 20", "query",
     {"from": "items", "where": [["cat", "==", "c7"]], "orderBy": [{"field": "score", "direction": "desc"}], "limit": 20}),
    ("range + limit 20", "query",
     {"from": "items", "where": [["score", ">=", 500000]], "orderBy": [{"field": "score"}], "limit": 20}),
    ("array-contains + limit 20", "query", {"from": "items", "where": [["tags", "array-contains", "t42"]], "limit": 20}),
    ("collection group + orderBy + limit 20", "query",
     {"from": {"collectionGroup": "notes"}, "where": [["flag", "==", True]], "orderBy": [{"field": "score"}], "limit": 20}),
    ("count (cat == c7)", "aggregate",
     {"query": {"from": "items", "where": [["cat", "==", "c7"]]}, "aggregations": {"n": {"count": {}}}}),
    ("count upTo 1000", "aggregate",
     {"query": {"from": "items", "where": [["flag", "==", True]]}, "aggregations": {"n": {"count": {"upTo": 1000}}}}),
    # The same number of matches (900) at every size: what an index-served count costs as the collection grows.
    ("count (n < 1000)", "aggregate",
     {"query": {"from": "items", "where": [["n", "<", 1000]]}, "aggregations": {"n": {"count": {}}}}),
]


def latency(port, kind, body, requests):
    conn = HTTPConnection("127.0.0.1", port, timeout=60)
    payload = json.dumps(body)
    headers = {"Content-Type": "application/json", **AUTH}
    times = []
    for k in range(requests + 20):
        t = time.perf_counter()
        conn.request("POST", f"/v1/{kind}", payload, headers)
        r = conn.getresponse()
        data = r.read()
        if r.status != 200:
            raise SystemExit(f"{kind} failed: {r.status} {data[:200]}")
        if k >= 20:
            times.append((time.perf_counter() - t) * 1000)
    conn.close()
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.99) - 1], json.loads(data)


def scale(args):
    sizes = [int(s) for s in args.sizes.split(",")]
    tmp = tempfile.mkdtemp(prefix="hearth-qscale-")
    procs = []
    rng = random.Random(42)
    try:
        port = free_port()
        proc, base = start_hearth(tmp, port, args.binary, indexes=not args.no_indexes); procs.append(proc)
        loaded = 0
        table = {}
        for size in sizes:
            t0 = time.time()
            for start in range(loaded, size, 50_000):
                commit_all(base, scale_docs(start, min(size, start + 50_000), rng))
            load_s = time.time() - t0
            print(f"{size} documents: loaded {size - loaded} in {load_s:.1f} s ({(size - loaded) / load_s:.0f}/s), "
                  f"peak RSS {peak_rss_mb(proc.pid):.0f} MiB, load average {os.getloadavg()[0]:.1f}", flush=True)
            loaded = size
            for name, kind, body in SCALE_QUERIES:
                p50, p99, answer = latency(port, kind, body, args.requests)
                n = len(answer.get("documents", [])) if kind == "query" else answer["result"]["n"]
                table[(name, size)] = (p50, p99)
                print(f"  {name:40} p50 {p50:7.2f} ms  p99 {p99:7.2f} ms  ({n} results)", flush=True)
        print()
        print("| query | " + " | ".join(f"{s:,} p50 / p99 ms" for s in sizes) + f" | {sizes[-1]:,} vs {sizes[0]:,} (p50) |")
        print("|---|" + "---|" * (len(sizes) + 1))
        for name, _, _ in SCALE_QUERIES:
            cells = " | ".join(f"{table[(name, s)][0]:.2f} / {table[(name, s)][1]:.2f}" for s in sizes)
            print(f"| {name} | {cells} | {table[(name, sizes[-1])][0] / table[(name, sizes[0])][0]:.2f}x |")
        print(f"\npeak RSS {peak_rss_mb(proc.pid):.0f} MiB; data on disk {dir_size(tmp) / 2**20:.0f} MiB")
    finally:
        stop(procs)
        shutil.rmtree(tmp, ignore_errors=True)


# --- writecost ----------------------------------------------------------------------------------------

def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def writecost(args):
    tmp = tempfile.mkdtemp(prefix="hearth-wcost-")
    procs = []
    try:
        proc, base = start_hearth(tmp, free_port(), args.binary, indexes=False); procs.append(proc)
        lua = os.path.join(ROOT, "bench", "lua", "docs.lua")
        env = dict(os.environ, BENCH_MODE="create", BENCH_PATH="/v1/docs/bench", BENCH_AUTH=f"Bearer {ADMIN_KEY}")
        costs = []
        for _ in range(args.rounds):
            before = cpu_seconds(proc.pid)
            out = subprocess.run(["wrk", "-t2", "-c16", f"-d{args.duration}s", "-s", lua, base], env=env,
                                 capture_output=True, text=True, timeout=args.duration + 60).stdout
            used = cpu_seconds(proc.pid) - before
            requests = int(next(l for l in out.splitlines() if "requests in" in l).split()[0])
            rps = float(next(l for l in out.splitlines() if l.startswith("RESULT")).split()[1].split("=")[1])
            costs.append(used / requests * 1e6)
            print(f"create: {rps:.0f} req/s, {costs[-1]:.0f} us CPU per request "
                  f"(load average {os.getloadavg()[0]:.1f})", flush=True)
        print(f"median {statistics.median(costs):.0f} us CPU per create ({args.binary or 'release build'})")
    finally:
        stop(procs)
        shutil.rmtree(tmp, ignore_errors=True)


def dir_size(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(path) for f in files)


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="command", required=True)
    c = sub.add_parser("compare")
    c.add_argument("--duration", type=int, default=10)
    c.add_argument("--rounds", type=int, default=2)
    c.add_argument("--connections", type=int, default=16)
    c.add_argument("--no-indexes", action="store_true", help="run Hearth without its composite index")
    c.add_argument("--baseline", metavar="BINARY", help="also run an older build of Hearth, for before-and-after in one run")
    s = sub.add_parser("scale")
    s.add_argument("--sizes", default="10000,100000,1000000")
    s.add_argument("--requests", type=int, default=200)
    s.add_argument("--binary", default=None)
    s.add_argument("--no-indexes", action="store_true", help="run Hearth without its composite indexes")
    w = sub.add_parser("writecost")
    w.add_argument("--binary", default=None)
    w.add_argument("--duration", type=int, default=10)
    w.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    {"compare": compare, "scale": scale, "writecost": writecost}[args.command](args)


if __name__ == "__main__":
    main()
