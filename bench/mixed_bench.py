#!/usr/bin/env python3
"""Queries during a create load.

In each round a fresh server takes the create workload of docs_bench.py
(wrk, 12 connections) while one client runs a query over the collection being written, one after another
(`count >= N`, ordered by `count`, 20 results), and checks that each answer has 20 documents. Prints creates/s
and the queries' count, median and p99 latency. Loopback only; every run is bounded in time.

    python3 bench/mixed_bench.py [--duration 10] [--rounds 2] [--connections 12]
"""
import argparse, json, os, statistics, subprocess, tempfile, threading, time
from http.client import HTTPConnection

from docs_bench import ADMIN_KEY, LUA, ROOT, built, free_port, stop, wait_up


def start(tmp, port):
    env = dict(os.environ, HEARTH_ADMIN_KEY=ADMIN_KEY)
    proc = subprocess.Popen([built(), "serve", "--data", os.path.join(tmp, "data"), "--port", str(port), "--log-level", "warning"],
                            env=env, stdout=subprocess.DEVNULL)
    wait_up(f"http://127.0.0.1:{port}/healthz")
    return proc


def run(duration, connections):
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        proc = start(tmp, port)
        try:
            conn = HTTPConnection("127.0.0.1", port, timeout=30)
            headers = {"Authorization": f"Bearer {ADMIN_KEY}", "Content-Type": "application/json"}
            for i in range(100):  # enough documents for every query to fill its 20
                conn.request("PUT", f"/v1/docs/bench/seed{i}", json.dumps({"count": 1_000_000 + i}), headers)
                conn.getresponse().read()
            env = dict(os.environ, BENCH_MODE="create", BENCH_PATH="/v1/docs/bench", BENCH_AUTH=f"Bearer {ADMIN_KEY}")
            load = subprocess.Popen(["wrk", "-t2", f"-c{connections}", f"-d{duration}s", "-s", LUA, f"http://127.0.0.1:{port}"],
                                    env=env, stdout=subprocess.PIPE, text=True)
            latencies, short = [], 0
            end = time.time() + duration - 0.5
            time.sleep(0.5)
            while time.time() < end:
                body = json.dumps({"from": "bench", "where": [["count", ">=", 500]], "orderBy": [{"field": "count"}], "limit": 20})
                t0 = time.perf_counter()
                conn.request("POST", "/v1/query", body, headers)
                answer = json.loads(conn.getresponse().read())
                latencies.append((time.perf_counter() - t0) * 1000)
                if len(answer.get("documents", [])) != 20:
                    short += 1
            out = load.communicate(timeout=duration + 30)[0]
            rps = next(float(line.split()[1]) for line in out.splitlines() if line.startswith("Requests/sec"))
            latencies.sort()
            return dict(rps=rps, queries=len(latencies), short=short, p50=statistics.median(latencies),
                        p99=latencies[int(len(latencies) * 0.99) - 1])
        finally:
            stop([proc])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--connections", type=int, default=12)
    args = parser.parse_args()
    built()
    rs = []
    for _ in range(args.rounds):
        r = run(args.duration, args.connections)
        rs.append(r)
        print(f"creates {r['rps']:8.0f}/s  queries {r['queries']:5}  short answers {r['short']}  "
              f"query p50 {r['p50']:.2f} ms  p99 {r['p99']:.2f} ms", flush=True)
    med = lambda k: statistics.median(r[k] for r in rs)
    print("\n| creates/s | queries answered | query p50 ms | query p99 ms |\n|---|---|---|---|")
    print(f"| {med('rps'):.0f} | {med('queries'):.0f} | {med('p50'):.2f} | {med('p99'):.2f} |")


if __name__ == "__main__":
    main()
