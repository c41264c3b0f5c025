#!/usr/bin/env python3
"""Server CPU time per request on the document paths with the admin key (Hearth only, loopback).

Starts the release build on a fresh folder (synchronous=NORMAL, so the disk's sync latency does not
throttle creates), preloads 30,000 documents, then runs wrk (2 threads, 16 connections, 5 s, `lua/docs.lua`)
for get and create, twice each, and divides the server process's user+system CPU time (from /proc) by the
requests served. Bounded in time; stops by itself.

    python3 bench/cpu_per_request.py
"""
import json, os, shutil, subprocess, tempfile, time, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KEY = "hak_bench_admin_key_0123456789abcdef"
PORT = 18097
DURATION = 5


def main():
    tmp = tempfile.mkdtemp(prefix="hearth-cpu-")
    proc = subprocess.Popen([os.path.join(ROOT, ".build", "release", "hearth"), "serve", "--data", os.path.join(tmp, "h"),
                             "--port", str(PORT), "--log-level", "warning", "--synchronous", "NORMAL"],
                            env=dict(os.environ, HEARTH_ADMIN_KEY=KEY), stdout=subprocess.DEVNULL)
    try:
        base = f"http://127.0.0.1:{PORT}"
        for _ in range(100):
            try:
                urllib.request.urlopen(base + "/healthz", timeout=1)
                break
            except Exception:
                time.sleep(0.1)
        for start in range(0, 30_000, 500):
            writes = [{"set": f"bench/b{i:014d}", "data": {"title": "t", "count": i, "body": "lorem ipsu" * 20}}
                      for i in range(start + 1, start + 501)]
            req = urllib.request.Request(base + "/v1/commit", data=json.dumps({"writes": writes}).encode(), method="POST",
                                         headers={"Content-Type": "application/json", "Authorization": "Bearer " + KEY})
            urllib.request.urlopen(req, timeout=60).read()

        def cpu_seconds():
            fields = open(f"/proc/{proc.pid}/stat").read().split(")")[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

        print(f"load average {os.getloadavg()[0]:.1f}")
        for mode, path in [("get", "/v1/docs/bench/b"), ("create", "/v1/docs/bench")] * 2:
            before = cpu_seconds()
            out = subprocess.run(["wrk", "-t2", "-c16", f"-d{DURATION}s", "-s", os.path.join(ROOT, "bench", "lua", "docs.lua"), base],
                                 env=dict(os.environ, BENCH_MODE=mode, BENCH_PATH=path, BENCH_AUTH="Bearer " + KEY,
                                          BENCH_N="30000"),
                                 capture_output=True, text=True, timeout=DURATION + 60).stdout
            used = cpu_seconds() - before
            line = next(l for l in out.splitlines() if l.startswith("RESULT"))
            rps = float(line.split()[1].split("=")[1])
            print(f"{mode:6} {rps:8.0f} req/s  {1e6 * used / (rps * DURATION):5.0f} µs CPU per request", flush=True)
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
