#!/usr/bin/env python3
"""Document store benchmark: Hearth and PocketBase side by side, in one run, on loopback.

Workloads (16 connections, wrk): create (POST of a ~300-byte document) and get-by-id (random ids among
30,000 preloaded documents). Each workload runs ROUNDS times per server, alternating, and the median is
reported with the Hearth/PocketBase ratio. Both servers and all traffic stay on 127.0.0.1; every run is
bounded in time and stops by itself.

    python3 bench/docs_bench.py [--duration 10] [--rounds 2] [--connections 16] [--indexes FILE]... [--random-ids]

Each `--indexes FILE` adds one more Hearth server, started with that index file (e.g. single-field
overrides from `bench/indexes/`), to the same run; its rows are labelled with the file's name.
`--varied` gives every created document a title and count of its own (random) instead of the same ones.
`--random-ids` adds one with Firestore's random auto ids (Hearth's default ids begin with their time).
After every run the script waits a second, so that no server's background work (checkpoints) falls into
another's run.
"""
import argparse, json, os, shutil, signal, statistics, subprocess, sys, tempfile, time, urllib.request
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LUA = os.path.join(ROOT, "bench", "lua", "docs.lua")
N_DOCS = 30_000
ADMIN_KEY = "hak_bench_" + os.urandom(16).hex()  # fresh per run, so no other server accepts it


def http(method, url, body=None, headers=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json", **(headers or {})})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read() or b"{}")


_built = set()


def built(product="hearth", config="release"):
    """The path of a product's binary, built first (once per run): `swift build` does nothing when the build
    is current, and a run never measures a binary older than the sources."""
    if (product, config) not in _built:
        subprocess.run(["swift", "build", "-c", config, "--product", product], cwd=ROOT, check=True)
        _built.add((product, config))
    return os.path.join(ROOT, ".build", config, product)


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop(procs, timeout=20):
    """Stops servers gracefully (SIGTERM), killing any that does not exit in time."""
    for proc in procs:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()


def wait_up(url, seconds=60):
    end = time.time() + seconds
    while time.time() < end:
        try:
            urllib.request.urlopen(url, timeout=1).read()
            return
        except Exception:
            time.sleep(0.1)
    raise SystemExit(f"server at {url} did not come up")


def doc_body(i):
    return {"title": f"A day at the lake, part {i}", "count": i, "published": i % 2 == 0, "body": "lorem ipsu" * 20}


def start_hearth(tmp, port, synchronous, indexes=None, name="hearth", auto_ids="ordered", binary=None):
    binary = binary or built()
    env = dict(os.environ, HEARTH_ADMIN_KEY=ADMIN_KEY, HEARTH_SYNCHRONOUS=synchronous, HEARTH_AUTO_IDS=auto_ids)
    extra = ["--indexes", indexes] if indexes else []
    proc = subprocess.Popen([binary, "serve", "--data", os.path.join(tmp, name), "--port", str(port), "--log-level", "warning"] + extra,
                            env=env, stdout=subprocess.DEVNULL)
    wait_up(f"http://127.0.0.1:{port}/healthz")
    base = f"http://127.0.0.1:{port}"
    auth = {"Authorization": f"Bearer {ADMIN_KEY}"}
    for start in range(0, N_DOCS, 500):
        writes = [{"set": f"bench/b{i:014d}", "data": doc_body(i)} for i in range(start + 1, min(N_DOCS, start + 500) + 1)]
        http("POST", f"{base}/v1/commit", {"writes": writes}, auth)
    return proc, {
        "create": dict(BENCH_MODE="create", BENCH_PATH="/v1/docs/bench", BENCH_AUTH=f"Bearer {ADMIN_KEY}"),
        "get": dict(BENCH_MODE="get", BENCH_PATH="/v1/docs/bench/b", BENCH_AUTH=f"Bearer {ADMIN_KEY}", BENCH_N=str(N_DOCS)),
    }, base


def launch_pocketbase(tmp, port, collection):
    """Starts PocketBase on a fresh folder with a superuser, creates a public base collection (`collection`
    holds its name, fields and optional indexes), and answers (process, base URL, superuser token)."""
    pb_dir = os.path.join(tmp, "pb")
    subprocess.run(["pocketbase", "superuser", "upsert", "bench@example.com", "bench-password-123", "--dir", pb_dir],
                   check=True, stdout=subprocess.DEVNULL)
    proc = subprocess.Popen(["pocketbase", "serve", "--dir", pb_dir, "--http", f"127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    wait_up(f"{base}/api/health")
    token = http("POST", f"{base}/api/collections/_superusers/auth-with-password",
                 {"identity": "bench@example.com", "password": "bench-password-123"})["token"]
    http("POST", f"{base}/api/collections", {
        "type": "base", "listRule": "", "viewRule": "", "createRule": "", "updateRule": "", "deleteRule": "",
        **collection}, {"Authorization": token})
    return proc, base, token


def start_pocketbase(tmp, port):
    proc, base, _ = launch_pocketbase(tmp, port, {"name": "bench", "fields": [
        {"name": "title", "type": "text"}, {"name": "count", "type": "number"},
        {"name": "published", "type": "bool"}, {"name": "body", "type": "text"}]})

    def create(i):
        http("POST", f"{base}/api/collections/bench/records", {"id": f"b{i:014d}", **doc_body(i)})
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(create, range(1, N_DOCS + 1)))
    return proc, {
        "create": dict(BENCH_MODE="create", BENCH_PATH="/api/collections/bench/records"),
        "get": dict(BENCH_MODE="get", BENCH_PATH="/api/collections/bench/records/b", BENCH_N=str(N_DOCS)),
    }, base


def settle():
    """Waits a second after a run for either server's checkpoints, then writes back everything the run left in the
    page cache (`sync`), so that neither server's background work falls into the other's run: a server that leaves
    its writes to the kernel would otherwise have them written back during the next server's run, whose syncs
    would wait behind them."""
    time.sleep(1)
    os.sync()


def wrk(base, env, duration, connections):
    out = subprocess.run(["wrk", "-t2", f"-c{connections}", f"-d{duration}s", "-s", LUA, base],
                         env=dict(os.environ, **env), capture_output=True, text=True, timeout=duration + 60).stdout
    line = next(l for l in out.splitlines() if l.startswith("RESULT"))
    return {k: float(v) for k, v in (kv.split("=") for kv in line.split()[1:])}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--synchronous", default="NORMAL", help="Hearth's durability: NORMAL (its default) or FULL")
    ap.add_argument("--indexes", action="append", default=[], metavar="FILE",
                    help="also run a Hearth server started with this index file (repeatable)")
    ap.add_argument("--varied", action="store_true",
                    help="created documents each have their own title and count (random) instead of the same ones")
    ap.add_argument("--random-ids", action="store_true",
                    help="also run a Hearth server with Firestore's random auto ids (--auto-ids random)")
    ap.add_argument("--baseline", metavar="BINARY",
                    help="also run a Hearth server from this binary (an older build), for before-and-after in one run")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="hearth-bench-")
    procs = []
    try:
        h_proc, h_env, h_base = start_hearth(tmp, free_port(), args.synchronous); procs.append(h_proc)
        servers = [("hearth", h_base, h_env)]
        for k, file in enumerate(args.indexes):
            name = "hearth+" + os.path.splitext(os.path.basename(file))[0]
            proc, env, base = start_hearth(tmp, free_port(), args.synchronous, os.path.abspath(file), f"hearth{k + 1}")
            procs.append(proc)
            servers.append((name, base, env))
        if args.baseline:
            proc, env, base = start_hearth(tmp, free_port(), args.synchronous, name="hearth-baseline",
                                           binary=os.path.abspath(args.baseline))
            procs.append(proc)
            servers.append(("hearth-baseline", base, env))
        if args.random_ids:
            proc, env, base = start_hearth(tmp, free_port(), args.synchronous, name="hearth-random", auto_ids="random")
            procs.append(proc)
            servers.append(("hearth+random-ids", base, env))
        print(f"Hearth durability: {args.synchronous}; PocketBase: WAL with synchronous=NORMAL; {args.connections} connections, "
              f"{args.duration} s per run, {args.rounds} rounds, {'varied' if args.varied else 'identical'} documents, load average {os.getloadavg()[0]:.1f}", flush=True)
        p_proc, p_env, p_base = start_pocketbase(tmp, free_port()); procs.append(p_proc)
        if args.varied:
            for _, _, env in servers + [("pocketbase", p_base, p_env)]:
                env["create"]["BENCH_VARY"] = "1"
        results = {}
        width = max(len(name) for name, _, _ in servers + [("pocketbase", None, None)])
        for workload in ["create", "get"]:
            for _ in range(args.rounds):
                for name, base, env in servers + [("pocketbase", p_base, p_env)]:
                    r = wrk(base, env[workload], args.duration, args.connections)
                    results.setdefault((workload, name), []).append(r)
                    settle()
                    print(f"{workload:7} {name:{width}} {r['rps']:9.0f} req/s  p50 {r['p50_ms']:.2f} ms  p99 {r['p99_ms']:.2f} ms  errors {int(r['non2xx'])}",
                          flush=True)
        print()
        print("| workload | server | req/s | PocketBase req/s | ratio | p99 ms | PocketBase p99 ms |")
        print("|---|---|---|---|---|---|---|")
        for workload in ["create", "get"]:
            p = statistics.median(r["rps"] for r in results[(workload, "pocketbase")])
            pp99 = statistics.median(r["p99_ms"] for r in results[(workload, "pocketbase")])
            for name, _, _ in servers:
                h = statistics.median(r["rps"] for r in results[(workload, name)])
                hp99 = statistics.median(r["p99_ms"] for r in results[(workload, name)])
                print(f"| {workload} | {name} | {h:.0f} | {p:.0f} | {h / p:.2f}x | {hp99:.2f} | {pp99:.2f} |")
    finally:
        stop(procs)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
