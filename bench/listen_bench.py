#!/usr/bin/env python3
"""Live-update benchmark: Hearth (WebSocket, /v1/listen) and PocketBase realtime (SSE) side by side, in one run,
on loopback.

For each client count, N listeners connect to one server and each watches either one query over a shared
collection of 10 documents ("query": every write reaches every listener) or a document of its own ("doc":
every write reaches one listener). A writer updates documents at RATE writes/s for SECONDS, stamping each
with the wall clock; listeners record write-to-delivery latency. The server's RSS is read from /proc before
the listeners connect and after their first snapshots. The driver is the Swift program bench/ListenBench
(Hearth's side uses HearthTesting's ListenFrameClient). Everything is bounded in time and stops by itself.

    python3 bench/listen_bench.py [--clients 1000,5000,10000] [--modes query,doc] [--seconds 10] [--rate 100]
                                  [--writer open|closed]

The writer is open-loop by default: each write goes out at its time (over 8 connections) whether or not the
earlier ones were answered, and is stamped with that time, so a server that falls behind shows it in the
latencies rather than by slowing the writer down (`--writer closed` waits for each answer, as earlier runs did).
"""
import argparse, json, os, resource, shutil, signal, subprocess, sys, tempfile, time, urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from docs_bench import built, http, launch_pocketbase, wait_up  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ADMIN_KEY = "hak_bench_" + os.urandom(16).hex()  # fresh per run, so no other server accepts it
CONFIG = "release"


def binary(product):
    return built(product, CONFIG)


def build():
    for product in ["hearth", "hearth-listen-bench"]:
        binary(product)


def start_hearth(tmp, port, executable=None):
    env = dict(os.environ, HEARTH_ADMIN_KEY=ADMIN_KEY)
    proc = subprocess.Popen([executable or binary("hearth"), "serve", "--data", os.path.join(tmp, "hearth"),
                             "--port", str(port), "--log-level", "warning"], env=env, stdout=subprocess.DEVNULL)
    wait_up(f"http://127.0.0.1:{port}/healthz")
    return proc


def start_pocketbase(tmp, port):
    proc, _, _ = launch_pocketbase(tmp, port, {"name": "feed", "fields": [
        {"name": "sentAt", "type": "number"}, {"name": "room", "type": "text"}]})
    return proc


def run(server, port, clients, mode, seconds, rate, pid, writer):
    kind = "pocketbase" if server == "pocketbase" else "hearth"
    out = subprocess.run([binary("hearth-listen-bench"), kind, str(port),
                          ADMIN_KEY if kind == "hearth" else "-", str(clients), mode, str(seconds), str(rate), str(pid),
                          writer],
                         capture_output=True, text=True, timeout=seconds + 300)
    line = next((l for l in out.stdout.splitlines() if l.startswith("{")), None)
    if line is None:
        return {"server": server, "clients": clients, "mode": mode, "error": (out.stderr or "no output").strip()[-300:]}
    return dict(json.loads(line), server=server)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clients", default="1000,5000,10000")
    ap.add_argument("--modes", default="query,doc")
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--rate", type=int, default=100)
    ap.add_argument("--writer", choices=["open", "closed"], default="open",
                    help="open: each write goes out at its time, answered or not (the default); "
                         "closed: each write waits for the previous answer, so a slow server slows the writer")
    ap.add_argument("--config", default="release", help="the build to measure: release, or debug to check the harness")
    ap.add_argument("--baseline", metavar="BINARY",
                    help="also run an older build of Hearth in each step, for before-and-after in one run")
    args = ap.parse_args()
    global CONFIG
    CONFIG = args.config
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 65536), hard))  # inherited by both servers and the driver
    build()
    print(f"{CONFIG} build, load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores, open files {resource.getrlimit(resource.RLIMIT_NOFILE)[0]}, "
          f"{args.writer}-loop writer", flush=True)
    rows = []
    for mode in args.modes.split(","):
        for clients in [int(c) for c in args.clients.split(",")]:
            for server in ["hearth", "pocketbase"] + (["baseline"] if args.baseline else []):
                # A fresh server per run, so that one run's connections and memory never weigh on the next.
                tmp = tempfile.mkdtemp(prefix="hearth-listen-bench-")
                port = 18190 if server == "pocketbase" else 18180
                if server == "pocketbase":
                    proc = start_pocketbase(tmp, port)
                else:
                    proc = start_hearth(tmp, port, os.path.abspath(args.baseline) if server == "baseline" else None)
                try:
                    r = run(server, port, clients, mode, args.seconds, args.rate, proc.pid, args.writer)
                finally:
                    proc.send_signal(signal.SIGTERM)
                    try:
                        proc.wait(timeout=20)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                    shutil.rmtree(tmp, ignore_errors=True)
                rows.append(r)
                print(json.dumps(r), flush=True)
    print()
    print("| mode | clients | Hearth p50 ms | Hearth p99 ms | PocketBase p50 ms | PocketBase p99 ms | p99 ratio | "
          "Hearth writes/s | PocketBase writes/s | write answer p99 ms (Hearth / PB) | Hearth KiB/listener | PocketBase KiB/listener |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for mode in args.modes.split(","):
        for clients in [int(c) for c in args.clients.split(",")]:
            h = next(r for r in rows if r["server"] == "hearth" and r["clients"] == clients and r["mode"] == mode)
            p = next(r for r in rows if r["server"] == "pocketbase" and r["clients"] == clients and r["mode"] == mode)
            if "error" in h or "error" in p:
                print(f"| {mode} | {clients} | {h.get('p50_ms', h.get('error'))} | {h.get('p99_ms', '')} | "
                      f"{p.get('p50_ms', p.get('error'))} | {p.get('p99_ms', '')} | | | | | | |")
                continue
            ratio = p["p99_ms"] / h["p99_ms"] if h["p99_ms"] > 0 else float("nan")
            print(f"| {mode} | {clients} | {h['p50_ms']:.1f} | {h['p99_ms']:.1f} | {p['p50_ms']:.1f} | {p['p99_ms']:.1f} | "
                  f"{ratio:.2f}x | {h['writes_per_second']:.0f} | {p['writes_per_second']:.0f} | "
                  f"{h.get('answer_p99_ms', -1):.1f} / {p.get('answer_p99_ms', -1):.1f} | "
                  f"{h['rss_per_listener_kb']:.1f} | {p['rss_per_listener_kb']:.1f} |")
    if args.baseline:
        print()
        print("| mode | clients | this build p50 / p99 ms | baseline p50 / p99 ms | p99 this / baseline |")
        print("|---|---|---|---|---|")
        for mode in args.modes.split(","):
            for clients in [int(c) for c in args.clients.split(",")]:
                h = next(r for r in rows if r["server"] == "hearth" and r["clients"] == clients and r["mode"] == mode)
                b = next(r for r in rows if r["server"] == "baseline" and r["clients"] == clients and r["mode"] == mode)
                if "error" in h or "error" in b:
                    print(f"| {mode} | {clients} | {h.get('error', '')} | {b.get('error', '')} | |")
                    continue
                print(f"| {mode} | {clients} | {h['p50_ms']:.1f} / {h['p99_ms']:.1f} | {b['p50_ms']:.1f} / {b['p99_ms']:.1f} | "
                      f"{h['p99_ms'] / b['p99_ms']:.2f} |")


if __name__ == "__main__":
    main()
