#!/usr/bin/env python3
"""Security rules cost: the document store's create and get workloads with and without rules evaluation.

One Hearth server (release build) runs with `bench/rules/bench.rules`: a guard with one get() lookup per
request plus a check on the document. Each workload runs as the admin (rules bypassed: the same request
path as a server without rules) and as an unauthenticated caller (every request decided by the rules),
alternating, ROUNDS times each; medians and the throughput ratio are reported. Loopback only; every run is
bounded in time and stops by itself.

    python3 bench/rules_bench.py [--duration 10] [--rounds 2] [--connections 16] [--synchronous NORMAL]
"""
import argparse, os, re, signal, shutil, statistics, subprocess, sys, tempfile, threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from docs_bench import N_DOCS, ROOT, built, doc_body, http, stop, wait_up, wrk  # noqa: E402

RULES = os.path.join(ROOT, "bench", "rules", "bench.rules")
ADMIN_KEY = "hak_rules_bench_" + os.urandom(16).hex()  # this run's server only


def cpu_seconds(pid):
    """User plus system CPU time of a process so far (from /proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start(tmp, synchronous, procs):
    binary = built()
    env = dict(os.environ, HEARTH_ADMIN_KEY=ADMIN_KEY, HEARTH_SYNCHRONOUS=synchronous)
    # Port 0: the server picks a free port and names it, so the benchmark never talks to another server.
    proc = subprocess.Popen([binary, "serve", "--data", os.path.join(tmp, "hearth"), "--port", "0",
                             "--log-level", "warning", "--rules", RULES], env=env, stdout=subprocess.PIPE, text=True)
    procs.append(proc)
    match = None
    for line in proc.stdout:
        match = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
        if match:
            break
    if not match:
        raise SystemExit("hearth serve did not start")
    threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()  # keep the pipe drained
    base = f"http://127.0.0.1:{match.group(1)}"
    wait_up(f"{base}/healthz")
    auth = {"Authorization": f"Bearer {ADMIN_KEY}"}
    http("PUT", f"{base}/v1/docs/settings/bench", {"open": True}, auth)
    for first in range(0, N_DOCS, 500):
        writes = [{"set": f"bench/b{i:014d}", "data": doc_body(i)} for i in range(first + 1, min(N_DOCS, first + 500) + 1)]
        http("POST", f"{base}/v1/commit", {"writes": writes}, auth)
    return proc, base


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--synchronous", default="NORMAL", help="FULL or NORMAL (default: NORMAL, where requests are CPU-bound)")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="hearth-rules-bench-")
    procs = []
    try:
        proc, base = start(tmp, args.synchronous, procs)
        print(f"durability {args.synchronous}; {args.connections} connections, {args.duration} s per run, "
              f"{args.rounds} rounds, load average {os.getloadavg()[0]:.1f}", flush=True)
        callers = {"no rules (admin)": f"Bearer {ADMIN_KEY}", "rules (guest)": ""}
        workloads = {
            "create": dict(BENCH_MODE="create", BENCH_PATH="/v1/docs/bench"),
            "get": dict(BENCH_MODE="get", BENCH_PATH="/v1/docs/bench/b", BENCH_N=str(N_DOCS)),
        }
        results = {}
        for workload, env in workloads.items():
            for _ in range(args.rounds):
                for caller, authorization in callers.items():
                    before = cpu_seconds(proc.pid)
                    r = wrk(base, dict(env, BENCH_AUTH=authorization), args.duration, args.connections)
                    # Server CPU per request: what the rules add shows here even where the disk bounds req/s.
                    r["cpu_us"] = (cpu_seconds(proc.pid) - before) / (r["rps"] * args.duration) * 1e6
                    results.setdefault((workload, caller), []).append(r)
                    print(f"{workload:7} {caller:17} {r['rps']:9.0f} req/s  p50 {r['p50_ms']:.2f} ms  "
                          f"p99 {r['p99_ms']:.2f} ms  server CPU {r['cpu_us']:.0f} µs/req  errors {int(r['non2xx'])}", flush=True)
        print(f"\nload average at the end {os.getloadavg()[0]:.1f}\n")
        print("| workload | no rules req/s | rules req/s | rules/no rules | no rules p99 ms | rules p99 ms "
              "| no rules CPU µs/req | rules CPU µs/req |")
        print("|---|---|---|---|---|---|---|---|")
        for workload in workloads:
            a, b = results[(workload, "no rules (admin)")], results[(workload, "rules (guest)")]
            ra, rb = statistics.median(r["rps"] for r in a), statistics.median(r["rps"] for r in b)
            pa, pb = statistics.median(r["p99_ms"] for r in a), statistics.median(r["p99_ms"] for r in b)
            ca, cb = statistics.median(r["cpu_us"] for r in a), statistics.median(r["cpu_us"] for r in b)
            print(f"| {workload} | {ra:.0f} | {rb:.0f} | {rb / ra:.3f} | {pa:.2f} | {pb:.2f} | {ca:.0f} | {cb:.0f} |")
    finally:
        stop(procs)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
