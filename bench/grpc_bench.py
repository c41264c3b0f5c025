#!/usr/bin/env python3
"""Firestore's gRPC face against the HTTP API, in one run, on one release-built server, on loopback.

Requests: `Commit` of one write and `BatchGetDocuments` of one document over gRPC, against `POST /v1/commit` of
one write and `GET /v1/docs/bench/{id}` over HTTP, each with CALLERS concurrent callers (16) on as many
connections, for DURATION seconds a run. By default (`--drivers c`) both faces are driven by C programs,
`h2load` for gRPC and `wrk` for HTTP, each repeating one request (the same document written, or read, on both
faces), so that the driver's own CPU, a few µs a call, does not bound what is measured; `--drivers swift`
drives both with bench/GRPCBench (grpc-swift 2's client and HearthTesting's HTTP/1.1 client, about 400 µs of
CPU a gRPC call). The faces alternate within each round, and the table shows medians over the rounds:
requests/s, latency (p50 and p99; h2load reports only the mean, shown as p50), and the server's CPU time per
request (from /proc/PID/stat). `--wrk` adds `wrk` on a random HTTP get as before.

Listen fan-out (`--listen`): for each face, a fresh server and LISTENERS listeners (1,000) of one query over a
shared collection of 10 documents (WebSocket `/v1/listen`, or gRPC `Listen` streams on connections of their
own), a writer at 100 writes/s for 10 s over HTTP; write-to-delivery latency over every delivery
(bench/ListenBench, as listen_bench.py runs it). With `--drivers c` the gRPC listeners are bench/listen_grpc.c
(libnghttp2, compiled here with `cc`), run by ListenBench beside its writer; with `--drivers swift`,
grpc-swift 2's client in ListenBench. `--listen-rounds N` runs the two faces N times, alternating which goes
first, and reports each round's gRPC / WebSocket p99 and the medians (one run's p99 swings with the machine's
load far more than between the faces).

`--hearth NAME=PATH` (repeatable) runs the same rounds on several builds of the server side by side, one server
each (an older build copied aside against the new one, say); without it, the release build of this tree.

    python3 bench/grpc_bench.py [--duration 10] [--rounds 3] [--callers 16] [--drivers c|swift] [--wrk] [--listen]
                                [--listeners 1000] [--listen-rounds 1] [--no-requests] [--skip-build] [--hearth NAME=PATH ...]
"""
import argparse, json, os, resource, statistics, subprocess, sys, tempfile, shutil, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from docs_bench import LUA, N_DOCS, ROOT, doc_body, free_port, http, stop, wait_up  # noqa: E402

FIXED_LUA = os.path.join(ROOT, "bench", "lua", "fixed.lua")
ADMIN_KEY = "hak_bench_" + os.urandom(16).hex()  # fresh per run, so no other server accepts it


def built(product):
    return os.path.join(ROOT, ".build", "release", product)


def build():
    """Builds every product in one invocation: built one `--product` at a time, SwiftPM recompiles the modules
    they share for each."""
    subprocess.run(["swift", "build", "-c", "release"], cwd=ROOT, check=True)


LISTEN_C = os.path.join(ROOT, "bench", "listen_grpc.c")


def listen_driver():
    """The C gRPC listeners, compiled when their source is newer than the binary."""
    binary = os.path.join(ROOT, ".build", "bench", "listen_grpc")
    if not os.path.exists(binary) or os.path.getmtime(binary) < os.path.getmtime(LISTEN_C):
        os.makedirs(os.path.dirname(binary), exist_ok=True)
        if subprocess.run(["cc", "-O2", "-o", binary, LISTEN_C, "-lnghttp2"]).returncode:
            raise SystemExit("compiling bench/listen_grpc.c failed (it needs: apt-get install -y libnghttp2-dev)")
    return binary


def start_hearth(binary, tmp, preload=True):
    http_port, grpc_port = free_port(), free_port()
    env = dict(os.environ, HEARTH_ADMIN_KEY=ADMIN_KEY)
    proc = subprocess.Popen([binary, "serve", "--data", os.path.join(tmp, "hearth"), "--port", str(http_port),
                             "--grpc-port", str(grpc_port), "--log-level", "warning"], env=env, stdout=subprocess.DEVNULL)
    wait_up(f"http://127.0.0.1:{http_port}/healthz")
    if preload:
        auth = {"Authorization": f"Bearer {ADMIN_KEY}"}
        for start in range(0, N_DOCS, 500):
            writes = [{"set": f"bench/b{i:014d}", "data": doc_body(i)} for i in range(start + 1, min(N_DOCS, start + 500) + 1)]
            http("POST", f"http://127.0.0.1:{http_port}/v1/commit", {"writes": writes}, auth)
    return proc, http_port, grpc_port


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load(face, workload, ports, args, pid):
    before = cpu_seconds(pid)
    out = subprocess.run([built("hearth-grpc-bench"), face, workload, str(ports[0]), str(ports[1]), ADMIN_KEY,
                          str(args.callers), str(args.callers), str(args.duration), str(N_DOCS)],
                         capture_output=True, text=True, timeout=args.duration + 120)
    server_cpu = cpu_seconds(pid) - before
    line = next((l for l in out.stdout.splitlines() if l.startswith("{")), None)
    if line is None:
        raise SystemExit(f"{face} {workload}: {(out.stderr or 'no output').strip()[-500:]}")
    r = json.loads(line)
    if r["errors"]:
        raise SystemExit(f"{face} {workload}: {r['errors']} calls failed, first: {r.get('first_error')}")
    r["server_us"] = server_cpu / r["requests"] * 1e6
    r["driver_us"] = r["driver_cpu_s"] / r["requests"] * 1e6
    return r


# The C drivers (`--drivers c`): h2load for gRPC, wrk for HTTP, each repeating one request, so that the
# driver's own CPU (a few µs a call) does not bound what the server answers. The same document is written (or
# read) on both faces.
FIXED_ID = "b00000000000001"


def _varint(n):
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number, payload):
    """A length-delimited protobuf field (strings, bytes and messages)."""
    if isinstance(payload, str):
        payload = payload.encode()
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _varint_field(number, value):
    return _varint(number << 3) + _varint(value)


def grpc_bodies(tmp):
    """Request files for h2load: the 5-byte gRPC prefix and a serialized `CommitRequest` (one `update` of the
    fixed document, docs_bench's ~300-byte shape) and `BatchGetDocumentsRequest` (the fixed document)."""
    database = "projects/bench/databases/(default)"
    name = f"{database}/documents/bench/{FIXED_ID}"
    doc = doc_body(1)
    fields = b"".join(_field(2, _field(1, key) + _field(2, value)) for key, value in [
        ("title", _field(17, doc["title"])), ("count", _varint_field(2, doc["count"])),
        ("published", _varint_field(1, int(doc["published"]))), ("body", _field(17, doc["body"]))])
    commit = _field(1, database) + _field(2, _field(1, _field(1, name) + fields))
    get = _field(1, database) + _field(2, name)
    paths = {}
    for workload, message in [("commit", commit), ("get", get)]:
        paths[workload] = os.path.join(tmp, f"grpc-{workload}.bin")
        with open(paths[workload], "wb") as f:
            f.write(b"\0" + len(message).to_bytes(4, "big") + message)
    with open(os.path.join(tmp, "http-commit.json"), "w") as f:
        json.dump({"writes": [{"set": f"bench/{FIXED_ID}", "data": doc}]}, f)
    paths["http-commit"] = os.path.join(tmp, "http-commit.json")
    return paths


GRPC_METHOD = {"commit": "Commit", "get": "BatchGetDocuments"}


def grpc_status(grpc_port, workload, bodies):
    """One call with curl, for its grpc-status (h2load counts only HTTP statuses, and gRPC fails with 200)."""
    out = subprocess.run(["curl", "-s", "--http2-prior-knowledge", "-o", "/dev/null", "-D", "-", "--data-binary",
                          "@" + bodies[workload], "-H", "content-type: application/grpc", "-H", "te: trailers",
                          "-H", f"authorization: Bearer {ADMIN_KEY}",
                          f"http://127.0.0.1:{grpc_port}/google.firestore.v1.Firestore/{GRPC_METHOD[workload]}"],
                         capture_output=True, text=True, timeout=30).stdout
    status = next((l.split(":", 1)[1].strip() for l in out.splitlines() if l.lower().startswith("grpc-status:")), None)
    if status != "0":
        raise SystemExit(f"gRPC {workload}: grpc-status {status}, answer:\n{out}")


def h2load(workload, ports, args, pid, bodies):
    grpc_status(ports[1], workload, bodies)
    before = cpu_seconds(pid)
    out = subprocess.run(["h2load", "-t1", f"-c{args.callers}", "-m1", "-D", str(args.duration), "-d", bodies[workload],
                          "-H", "content-type: application/grpc", "-H", "te: trailers",
                          "-H", f"authorization: Bearer {ADMIN_KEY}",
                          f"http://127.0.0.1:{ports[1]}/google.firestore.v1.Firestore/{GRPC_METHOD[workload]}"],
                         capture_output=True, text=True, timeout=args.duration + 60).stdout
    server_cpu = cpu_seconds(pid) - before
    done = next(l for l in out.splitlines() if l.startswith("requests:"))
    succeeded = int(done.split(" succeeded")[0].rsplit(",", 1)[1])
    failed = int(done.split(" failed")[0].rsplit(",", 1)[1])
    if failed or not succeeded:
        raise SystemExit(f"h2load {workload}: {out}")
    mean_ms = next(l for l in out.splitlines() if l.startswith("time for request:")).split()[5]
    mean = float(mean_ms[:-2]) / 1000 if mean_ms.endswith("us") else float(mean_ms[:-2]) if mean_ms.endswith("ms") else float(mean_ms[:-1]) * 1000
    return {"face": "grpc", "workload": workload, "rps": succeeded / args.duration, "p50_ms": mean, "p99_ms": -1,
            "server_us": server_cpu / succeeded * 1e6, "driver_us": -1, "requests": succeeded}


def run_wrk(script, threads, env, ports, args, pid, what):
    """Runs wrk with a Lua script for --duration; answers its RESULT line's figures and the server's CPU per
    request (µs), refusing a run with answers that were not 2xx."""
    before = cpu_seconds(pid)
    out = subprocess.run(["wrk", f"-t{threads}", f"-c{args.callers}", f"-d{args.duration}s", "-s", script,
                          f"http://127.0.0.1:{ports[0]}"], env=dict(os.environ, **env), capture_output=True, text=True,
                         timeout=args.duration + 60).stdout
    server_cpu = cpu_seconds(pid) - before
    line = next(l for l in out.splitlines() if l.startswith("RESULT"))
    r = {k: float(v) for k, v in (kv.split("=") for kv in line.split()[1:])}
    if r["non2xx"]:
        raise SystemExit(f"wrk {what}: {r['non2xx']:.0f} answers were not 2xx")
    return r, server_cpu / (r["rps"] * args.duration) * 1e6


def wrk_fixed(workload, ports, args, pid, bodies):
    method, path, body = (("POST", "/v1/commit", bodies["http-commit"]) if workload == "commit"
                          else ("GET", f"/v1/docs/bench/{FIXED_ID}", ""))
    env = dict(BENCH_METHOD=method, BENCH_PATH=path, BENCH_BODY=body, BENCH_AUTH=f"Bearer {ADMIN_KEY}")
    r, server_us = run_wrk(FIXED_LUA, 1, env, ports, args, pid, workload)
    return {"face": "http", "workload": workload, "rps": r["rps"], "p50_ms": r["p50_ms"], "p99_ms": r["p99_ms"],
            "server_us": server_us, "driver_us": -1}


def wrk_get(ports, args, pid):
    env = dict(BENCH_MODE="get", BENCH_PATH="/v1/docs/bench/b", BENCH_AUTH=f"Bearer {ADMIN_KEY}", BENCH_N=str(N_DOCS))
    r, server_us = run_wrk(LUA, 2, env, ports, args, pid, "get")
    return {"face": "http (wrk)", "workload": "get", "rps": r["rps"], "p50_ms": r["p50_ms"], "p99_ms": r["p99_ms"],
            "server_us": server_us, "driver_us": -1}


def fan_out(binary, face, args):
    tmp = tempfile.mkdtemp(prefix="hearth-grpc-bench-")
    proc, http_port, grpc_port = start_hearth(binary, tmp, preload=False)
    try:
        kind, port = ("grpc", f"{http_port}:{grpc_port}") if face == "grpc" else ("hearth", str(http_port))
        before = cpu_seconds(proc.pid)
        listeners = [listen_driver()] if face == "grpc" and args.drivers == "c" else []
        out = subprocess.run([built("hearth-listen-bench"), kind, port, ADMIN_KEY, str(args.listeners), "query", "10", "100",
                              str(proc.pid), "open"] + listeners, capture_output=True, text=True, timeout=600)
        server_cpu = cpu_seconds(proc.pid) - before
    finally:
        stop([proc])
        shutil.rmtree(tmp, ignore_errors=True)
    line = next((l for l in out.stdout.splitlines() if l.startswith("{")), None)
    if line is None:
        raise SystemExit(f"fan-out over {face}: {(out.stderr or 'no output').strip()[-500:]}")
    return dict(json.loads(line), face=face, server_cpu_s=server_cpu)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--callers", type=int, default=16)
    ap.add_argument("--wrk", action="store_true", help="also drive the HTTP get with wrk")
    ap.add_argument("--listen", action="store_true", help="also the Listen fan-out, gRPC and WebSocket")
    ap.add_argument("--listeners", type=int, default=1000)
    ap.add_argument("--listen-rounds", type=int, default=1, help="fan-out rounds per build (the faces alternate)")
    ap.add_argument("--no-requests", action="store_true", help="only the fan-out")
    ap.add_argument("--skip-build", action="store_true", help="run the release binaries as they are")
    ap.add_argument("--drivers", choices=["c", "swift"], default="c",
                    help="c: h2load (gRPC) and wrk (HTTP) repeating one request, bench/listen_grpc.c the gRPC listeners; "
                         "swift: bench/GRPCBench on both faces, grpc-swift's client the gRPC listeners")
    ap.add_argument("--hearth", action="append", default=[], metavar="NAME=PATH",
                    help="a server build to measure (repeatable); default: this tree's release build")
    args = ap.parse_args()
    builds = [tuple(h.split("=", 1)) for h in args.hearth] or [("this build", built("hearth"))]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 65536), hard))  # inherited by the server and the drivers
    if not args.skip_build:
        build()
    if args.drivers == "c" and not args.no_requests and (shutil.which("h2load") is None or shutil.which("wrk") is None):
        raise SystemExit("--drivers c needs h2load and wrk: apt-get install -y nghttp2-client wrk")
    if args.listen and args.drivers == "c":
        listen_driver()
    print(f"release build, load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores", flush=True)

    rows = []
    if not args.no_requests:
        # One server per build, all started (and preloaded) before the first round; only the one measured works.
        servers, tmps = [], []
        try:
            for name, binary in builds:
                tmps.append(tempfile.mkdtemp(prefix="hearth-grpc-bench-"))
                servers.append((name, *start_hearth(binary, tmps[-1])))
            bodies = grpc_bodies(tmps[0])
            for round in range(args.rounds):
                for name, proc, http_port, grpc_port in servers:
                    for workload in ["commit", "get"]:
                        # Alternate which face goes first, so that neither always runs on the fuller database.
                        faces = ["grpc", "http"] if round % 2 == 0 else ["http", "grpc"]
                        for face in faces:
                            ports = (http_port, grpc_port)
                            if args.drivers == "swift":
                                r = load(face, workload, ports, args, proc.pid)
                            elif face == "grpc":
                                r = h2load(workload, ports, args, proc.pid, bodies)
                            else:
                                r = wrk_fixed(workload, ports, args, proc.pid, bodies)
                            r = dict(r, build=name)
                            rows.append(r)
                            print(json.dumps(r), flush=True)
                            time.sleep(1)  # the server's checkpoints stay out of the next run
                        if args.wrk and workload == "get":
                            r = dict(wrk_get((http_port, grpc_port), args, proc.pid), build=name)
                            rows.append(r)
                            print(json.dumps(r), flush=True)
                            time.sleep(1)
        finally:
            stop([proc for _, proc, _, _ in servers])
            for tmp in tmps:
                shutil.rmtree(tmp, ignore_errors=True)
    fans = []
    if args.listen:
        for round in range(args.listen_rounds):
            for name, binary in builds:
                for face in ["websocket", "grpc"] if round % 2 == 0 else ["grpc", "websocket"]:
                    r = dict(fan_out(binary, face, args), build=name, load=os.getloadavg()[0], round=round)
                    fans.append(r)
                    print(json.dumps(r), flush=True)
    print(f"load average at the end {os.getloadavg()[0]:.1f}")

    if rows:
        def med(name, face, workload, key):
            return statistics.median(r[key] for r in rows if r["build"] == name and r["face"] == face and r["workload"] == workload)
        print()
        print(f"| build | workload ({args.callers} callers) | face | req/s | p50 ms | p99 ms | server CPU µs/req | driver CPU µs/req |")
        print("|---|---|---|---|---|---|---|---|")
        for name, _ in builds:
            for workload in ["commit", "get"]:
                for face in ["grpc", "http"] + (["http (wrk)"] if args.wrk and workload == "get" else []):
                    print(f"| {name} | {workload} | {face} | {med(name, face, workload, 'rps'):,.0f} | "
                          f"{med(name, face, workload, 'p50_ms'):.2f} | {med(name, face, workload, 'p99_ms'):.2f} | "
                          f"{med(name, face, workload, 'server_us'):.0f} | {med(name, face, workload, 'driver_us'):.0f} |")
                print(f"| {name} | {workload} | **gRPC / HTTP** | "
                      f"**{med(name, 'grpc', workload, 'rps') / med(name, 'http', workload, 'rps'):.2f}** | | | "
                      f"{med(name, 'grpc', workload, 'server_us') / med(name, 'http', workload, 'server_us'):.2f} | |")
    if fans:
        print()
        print(f"| build | fan-out ({args.listeners} listeners of one query, 100 writes/s for 10 s) | p50 ms | p99 ms | "
              "deliveries | writes/s | server CPU s | driver CPU s | KiB/listener |")
        print("|---|---|---|---|---|---|---|---|---|")
        for r in fans:
            print(f"| {r['build']} | {r['face']} | {r['p50_ms']:.1f} | {r['p99_ms']:.1f} | {r['samples']} | "
                  f"{r['writes_per_second']:.0f} | {r['server_cpu_s']:.1f} | {r['driver_cpu_s']:.1f} | "
                  f"{r['rss_per_listener_kb']:.1f} |")
        if args.listen_rounds > 1:
            print()
            for name, _ in builds:
                pick = lambda face, key: [r[key] for r in fans if r["build"] == name and r["face"] == face]
                ratios = [g / w for g, w in zip(pick("grpc", "p99_ms"), pick("websocket", "p99_ms"))]
                print(f"{name}: gRPC / WebSocket p99 by round {', '.join(f'{x:.2f}' for x in ratios)}; medians: p99 "
                      f"gRPC {statistics.median(pick('grpc', 'p99_ms')):.1f} ms, WebSocket "
                      f"{statistics.median(pick('websocket', 'p99_ms')):.1f} ms; p50 gRPC "
                      f"{statistics.median(pick('grpc', 'p50_ms')):.1f}, WebSocket {statistics.median(pick('websocket', 'p50_ms')):.1f}; "
                      f"server CPU gRPC {statistics.median(pick('grpc', 'server_cpu_s')):.1f} s, WebSocket "
                      f"{statistics.median(pick('websocket', 'server_cpu_s')):.1f} s")


if __name__ == "__main__":
    main()
