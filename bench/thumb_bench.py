#!/usr/bin/env python3
"""Thumbnails: a request that hits the kept copy against a plain download of the same bytes, in one run.

Starts `hearth serve` on loopback, puts a 1600x1200 JPEG (made with libvips's `vips` command), asks once for
its `?thumb=200x200` (made and kept), then puts the thumbnail's bytes as an object of their own. wrk (2
threads, 16 connections) then alternates between `GET /v1/files/photo.jpg?thumb=200x200` (the kept
thumbnail) and `GET /v1/files/copy.jpg` (a plain download of the same bytes), ROUNDS times each, and the
medians and their ratio are printed. Everything stays on 127.0.0.1 and stops by itself.

    python3 bench/thumb_bench.py [--duration 8] [--rounds 3] [--config release] [--binary PATH]
"""
import argparse, json, os, statistics, subprocess, sys, tempfile, time, urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from docs_bench import built, free_port, settle, stop, wait_up  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LUA = os.path.join(ROOT, "bench", "lua", "get.lua")
ADMIN_KEY = "hak_bench_" + os.urandom(16).hex()


def request(method, url, body=None, content_type=None):
    headers = {"Authorization": f"Bearer {ADMIN_KEY}"}
    if content_type:
        headers["Content-Type"] = content_type
    req = urllib.request.Request(url, data=body, method=method, headers=headers)
    with urllib.request.urlopen(req, timeout=60) as r:
        return r.read(), dict(r.headers)


def wrk(url, duration, connections):
    env = dict(os.environ, BENCH_AUTH=f"Bearer {ADMIN_KEY}")
    out = subprocess.run(["wrk", "-t2", f"-c{connections}", f"-d{duration}s", "-s", LUA, url],
                         capture_output=True, text=True, env=env).stdout
    line = next(l for l in out.splitlines() if l.startswith("RESULT"))
    fields = dict(part.split("=") for part in line.split()[1:])
    return {k: float(v) for k, v in fields.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--config", default="release", choices=["release", "debug"])
    ap.add_argument("--binary", help="a hearth binary to run instead of building one")
    args = ap.parse_args()
    binary = args.binary or built(config=args.config)
    procs = []
    with tempfile.TemporaryDirectory() as tmp:
        try:
            photo = os.path.join(tmp, "photo.jpg")
            subprocess.run(["vips", "gaussnoise", photo, "1600", "1200"], check=True)
            port = free_port()
            env = dict(os.environ, HEARTH_ADMIN_KEY=ADMIN_KEY)
            procs.append(subprocess.Popen([binary, "serve", "--data", os.path.join(tmp, "hearth"), "--port", str(port),
                                           "--log-level", "warning"], env=env, stdout=subprocess.DEVNULL))
            base = f"http://127.0.0.1:{port}"
            wait_up(f"{base}/healthz")
            with open(photo, "rb") as f:
                request("PUT", f"{base}/v1/files/photo.jpg", f.read(), "image/jpeg")
            start = time.time()
            thumb, headers = request("GET", f"{base}/v1/files/photo.jpg?thumb=200x200")
            made_ms = (time.time() - start) * 1000
            request("PUT", f"{base}/v1/files/copy.jpg", thumb, headers["Content-Type"])
            urls = {"thumbnail (kept)": f"{base}/v1/files/photo.jpg?thumb=200x200", "plain download": f"{base}/v1/files/copy.jpg"}
            load = os.getloadavg()[0]
            runs = {name: [] for name in urls}
            for _ in range(args.rounds):
                for name, url in urls.items():
                    runs[name].append(wrk(url, args.duration, args.connections))
                    settle()
            medians = {name: statistics.median(r["rps"] for r in rs) for name, rs in runs.items()}
            p99 = {name: statistics.median(r["p99_ms"] for r in rs) for name, rs in runs.items()}
            errors = sum(r["non2xx"] for rs in runs.values() for r in rs)
            print(json.dumps({"thumbnail_bytes": len(thumb), "first_request_ms": round(made_ms, 1),
                              "rps": {k: round(v, 1) for k, v in medians.items()}, "p99_ms": p99,
                              "ratio_thumbnail_to_download": round(medians["thumbnail (kept)"] / medians["plain download"], 3),
                              "non2xx": errors, "build": args.config, "load_average": round(load, 2)}))
        finally:
            stop(procs)


if __name__ == "__main__":
    main()
