#!/usr/bin/env python3
"""Functions: how soon a commit's webhook arrives, and what a trigger costs the writes that cause it.

Three measurements, on loopback, each bounded in time:

1. Latency. `hearth serve --functions` with one `document.created` trigger on `events/{id}` to a local
   receiver (a separate process, HTTP/1.1 keep-alive, answering 204 at once). A paced client creates
   `events/` documents at --rate per second for --duration seconds while wrk creates `plain/` documents (no
   trigger) at full speed on 16 connections. For every event the receiver notes when it arrived; the latency is
   that time minus the event's `time` (its commit time; one clock, one machine). Reported: p50, p99 and max,
   and the events delivered against those created.
2. Creates beside events (the target's measure). wrk creates `plain/` documents at full speed on 16
   connections while the paced client creates `events/` documents at --rate per second, against two servers
   alternately, --rounds times: one whose trigger on `events/{id}` delivers every event to nginx answering 204,
   and one with no functions file (the same paced creates, no events). Reported: wrk's median creates per
   second with the trigger against without, the server's CPU a request (wrk's and the paced creates), and the
   events delivered in the window.
3. Every create triggered. wrk creates documents on 16 connections against two servers alternately, --rounds times: one with
   no functions file and one whose trigger matches every created document (delivered as they go to nginx
   answering 204, a cheap peer, so that the endpoint's own work weighs little on the shared cores; each run
   starts once the queue left by the one before is empty). Reported: median creates per second, the ratio,
   the server's CPU per create, and the share of the triggered creates whose events were delivered within the
   window (`hearth_function_delivered` before and after wrk): a ratio counts only if deliveries keep up.

With --baseline OLD, an older build runs beside this one: the latency part --rounds times for each build,
alternating, and the other two parts with a server of each kind per build, all four in turn each round; the
script reports each build's medians and the ratios between them. --part runs one part alone.

    python3 bench/functions_bench.py [--rate 1000] [--duration 10] [--rounds 3] [--binary PATH] [--baseline OLD]
                                     [--part latency|beside|throughput]
"""
import argparse, json, os, statistics, subprocess, sys, tempfile, threading, time
import urllib.request
from http.client import HTTPConnection
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from docs_bench import ADMIN_KEY, built, doc_body, free_port, stop, wait_up, wrk  # noqa: E402

SECRET = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwMfKQ9r8GKYqr"
BODY = json.dumps(doc_body(1))


def receiver(port, out):
    """Runs in a child process: answers every POST with 204 and appends `arrival event-time` per event."""
    sink = open(out, "a", buffering=1)
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            arrived = time.time()
            self.send_response(204)
            self.send_header("Content-Length", "0")
            self.end_headers()
            event = json.loads(body)
            with lock:
                sink.write(f"{arrived:.6f} {event['time']}\n")

        def log_message(self, *args):
            pass

    parent = os.getppid()

    def follow_parent():
        # The script stops the receiver on every exit it sees; this ends it too when the script is killed.
        while os.getppid() == parent:
            time.sleep(1)
        os._exit(0)

    threading.Thread(target=follow_parent, daemon=True).start()
    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


def start_receiver(tmp):
    port = free_port()
    out = os.path.join(tmp, f"arrivals-{port}.txt")
    code = f"import sys; sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r}); " \
           f"import functions_bench as f; f.receiver({port}, {out!r})"
    proc = subprocess.Popen([sys.executable, "-c", code])
    time.sleep(0.5)
    return proc, port, out


def start_sink(tmp):
    """nginx in the foreground as a child of this script, answering every request with 204: the throughput
    part's endpoint. One worker, keep-alive without a request limit, no access log; config in `tmp`."""
    port = free_port()
    root = os.path.join(tmp, f"nginx-{port}")
    os.makedirs(os.path.join(root, "temp"), exist_ok=True)
    conf = os.path.join(root, "nginx.conf")
    user = "user root;" if os.geteuid() == 0 else ""  # the temporary folder is its owner's only
    with open(conf, "w") as f:
        f.write(f"""
{user}
daemon off;
worker_processes 1;
pid {root}/nginx.pid;
error_log {root}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    keepalive_requests 100000000;
    keepalive_timeout 120s;
    client_body_temp_path {root}/temp/body;
    proxy_temp_path {root}/temp/proxy;
    fastcgi_temp_path {root}/temp/fastcgi;
    uwsgi_temp_path {root}/temp/uwsgi;
    scgi_temp_path {root}/temp/scgi;
    server {{
        listen 127.0.0.1:{port};
        location / {{ return 204; }}
    }}
}}
""")
    proc = subprocess.Popen(["nginx", "-c", conf, "-p", root], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    end = time.time() + 30
    while time.time() < end:
        try:
            with urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}/hook", data=b"{}"), timeout=1) as r:
                if r.status == 204:
                    return proc, port
        except Exception:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit(f"nginx did not come up: {open(os.path.join(root, 'error.log')).read()}")


def tree_cpu_seconds(pid):
    """CPU time of a process and its children (nginx's master and worker), in seconds."""
    total = cpu_seconds(pid)
    for child in open(f"/proc/{pid}/task/{pid}/children").read().split():
        try:
            total += cpu_seconds(int(child))
        except FileNotFoundError:
            pass
    return total


def start_hearth(binary, tmp, name, functions=None):
    port = free_port()
    name = f"{name}-{port}"  # a fresh data folder for every server
    args = [binary, "serve", "--data", os.path.join(tmp, name), "--port", str(port), "--log-level", "warning"]
    if functions:
        path = os.path.join(tmp, name + "-functions.json")
        with open(path, "w") as f:
            json.dump(functions, f)
        args += ["--functions", path]
    proc = subprocess.Popen(args, env=dict(os.environ, HEARTH_ADMIN_KEY=ADMIN_KEY), stdout=subprocess.DEVNULL)
    wait_up(f"http://127.0.0.1:{port}/healthz")
    return proc, port


def functions_file(receiver_port, path):
    return {"endpoints": {"sink": {"url": f"http://127.0.0.1:{receiver_port}/hook", "secret": SECRET}},
            "triggers": [{"name": "created", "on": "document.created", "path": path, "endpoint": "sink"}]}


def paced_creates(port, rate, duration, threads=4):
    """Creates `events/` documents at `rate` per second in total; answers how many were created."""
    created = [0] * threads
    start = time.time() + 0.2

    def run(k):
        conn = HTTPConnection("127.0.0.1", port, timeout=30)
        headers = {"Authorization": f"Bearer {ADMIN_KEY}", "Content-Type": "application/json"}
        i = 0
        while True:
            due = start + (i * threads + k) / rate
            if due - start >= duration:
                break
            pause = due - time.time()
            if pause > 0:
                time.sleep(pause)
            conn.request("POST", "/v1/docs/events", BODY, headers)
            r = conn.getresponse()
            r.read()
            if 200 <= r.status < 300:
                created[k] += 1
            i += 1

    workers = [threading.Thread(target=run, args=(k,)) for k in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return sum(created)


def creates_beside_events(port, args):
    """wrk creating `plain/` documents at full speed on 16 connections while `events/` documents are created at
    --rate per second, for --duration seconds; answers wrk's result and how many events were created."""
    env = dict(BENCH_MODE="create", BENCH_PATH="/v1/docs/plain", BENCH_AUTH=f"Bearer {ADMIN_KEY}")
    results = {}
    background = threading.Thread(target=lambda: results.update(wrk=wrk(f"http://127.0.0.1:{port}", env, args.duration, 16)))
    background.start()
    created = paced_creates(port, args.rate, args.duration)
    background.join()
    return results["wrk"], created


def rfc3339_seconds(text):
    # 2026-11-27T01:02:03.456789Z
    from datetime import datetime, timezone
    base, _, frac = text.rstrip("Z").partition(".")
    t = datetime.strptime(base, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc).timestamp()
    return t + (float("0." + frac) if frac else 0.0)


def latency(binary, tmp, args, label=""):
    rproc, rport, out = start_receiver(tmp)
    procs = []
    try:
        hproc, port = start_hearth(binary, tmp, "latency", functions_file(rport, "events/{id}"))
        procs.append(hproc)
        r, created = creates_beside_events(port, args)
        deadline = time.time() + 30
        while time.time() < deadline:
            with open(out) as f:
                lines = f.read().splitlines()
            if len(lines) >= created:
                break
            time.sleep(0.2)
        lags = sorted((float(a) - rfc3339_seconds(t)) * 1000 for a, t in (line.split() for line in lines))
        p = lambda q: lags[min(len(lags) - 1, int(q * len(lags)))]
        print(f"latency{label}: {created} events created at {args.rate}/s for {args.duration} s, {len(lags)} delivered; "
              f"commit to webhook p50 {p(0.5):.2f} ms, p99 {p(0.99):.2f} ms, max {lags[-1]:.2f} ms; "
              f"meanwhile wrk created {r['rps']:.0f} plain documents/s", flush=True)
        return {"p50": p(0.5), "p99": p(0.99), "max": lags[-1], "delivered": len(lags), "created": created,
                "wrk": r["rps"]}
    finally:
        stop(procs)
        rproc.kill()


def cpu_seconds(pid):
    """User and system CPU time of a process so far, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pending_empty(port, seconds=120):
    """Waits until the server's queue of function events is empty (its deliveries of the run before done)."""
    end = time.time() + seconds
    while time.time() < end:
        req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/functions/events?pageSize=1",
                                     headers={"Authorization": f"Bearer {ADMIN_KEY}"})
        with urllib.request.urlopen(req, timeout=30) as r:
            if not json.load(r)["events"]:
                return
        time.sleep(0.2)
    print(f"warning: events still pending on port {port} after {seconds} s", flush=True)


def delivered_total(port):
    """The server's count of events acknowledged so far (`hearth_function_delivered`)."""
    req = urllib.request.Request(f"http://127.0.0.1:{port}/metrics", headers={"Authorization": f"Bearer {ADMIN_KEY}"})
    with urllib.request.urlopen(req, timeout=30) as r:
        for line in r.read().decode().splitlines():
            name, _, value = line.partition(" ")
            if name in ("hearth_function_delivered", "hearth_function_delivered_total"):
                return float(value)
    return 0.0


def throughput(builds, tmp, args):
    """`builds` maps a label to a binary; answers, per label, the median creates/s without and with a trigger."""
    rproc, rport = start_sink(tmp)
    env = dict(BENCH_MODE="create", BENCH_PATH="/v1/docs/bench", BENCH_AUTH=f"Bearer {ADMIN_KEY}")
    procs, servers, rates, cpu, kept = [], [], {}, {}, {}
    try:
        for label, binary in builds.items():
            for kind, functions in [("none", None), ("one trigger", functions_file(rport, "bench/{id}"))]:
                proc, port = start_hearth(binary, tmp, "plain" if functions is None else "triggered", functions)
                procs.append(proc)
                servers.append((label, kind, port, functions is not None, proc.pid))
                rates[(label, kind)] = []
                cpu[(label, kind)] = []
                kept[(label, kind)] = []
        for _ in range(args.rounds):
            for label, kind, port, triggered, pid in servers:
                if triggered:
                    pending_empty(port)
                before = cpu_seconds(pid), tree_cpu_seconds(rproc.pid)
                delivered_before = delivered_total(port) if triggered else 0.0
                r = wrk(f"http://127.0.0.1:{port}", env, args.duration, 16)
                window = ""
                if triggered:
                    # Deliveries must keep up during the window: a ratio made by leaving them for after it counts not.
                    in_window = delivered_total(port) - delivered_before
                    share = in_window / max(1.0, r["rps"] * args.duration)
                    kept[(label, kind)].append(share)
                    window = f"; {in_window:.0f} delivered in the window ({share * 100:.1f}% of the creates)"
                    pending_empty(port)  # the deliveries left at the end count in the server's CPU too
                server_cpu, receiver_cpu = cpu_seconds(pid) - before[0], tree_cpu_seconds(rproc.pid) - before[1]
                creates = r["rps"] * args.duration
                rates[(label, kind)].append(r["rps"])
                cpu[(label, kind)].append(server_cpu / creates * 1e6)
                print(f"creates{label} with {kind:11}: {r['rps']:8.0f}/s  p99 {r['p99_ms']:.2f} ms; server CPU "
                      f"{server_cpu / creates * 1e6:.0f} µs a create, nginx {receiver_cpu / creates * 1e6:.0f} µs{window}",
                      flush=True)
                time.sleep(1)
        out = {}
        for label in builds:
            none, one = statistics.median(rates[(label, "none")]), statistics.median(rates[(label, "one trigger")])
            cnone, cone = statistics.median(cpu[(label, "none")]), statistics.median(cpu[(label, "one trigger")])
            share = statistics.median(kept[(label, "one trigger")])
            print(f"throughput{label}: creates/s median {none:.0f} without a trigger, {one:.0f} with one: "
                  f"ratio {one / none:.3f}; server CPU a create {cnone:.0f} / {cone:.0f} µs; "
                  f"delivered within the window {share * 100:.1f}% of the triggered creates (median)", flush=True)
            out[label] = {"none": none, "one": one, "ratio": one / none, "cpu_none": cnone, "cpu_one": cone,
                          "delivered_in_window": share}
        return out
    finally:
        stop(procs)
        rproc.terminate()
        rproc.wait(timeout=10)


def beside_events(builds, tmp, args):
    """wrk's creates/s on `plain/` while `events/` documents are created at --rate/s, with their trigger declared
    (delivered to nginx) and with none, for each build (`builds` maps a label to a binary), every server in
    turn each round; answers, per label, the medians and their ratio."""
    rproc, rport = start_sink(tmp)
    procs, servers = [], []
    rates = {(label, kind): [] for label in builds for kind in ("none", "one trigger")}
    cpu = {key: [] for key in rates}
    try:
        for label, binary in builds.items():
            for kind, functions in [("none", None), ("one trigger", functions_file(rport, "events/{id}"))]:
                proc, port = start_hearth(binary, tmp, "beside", functions)
                procs.append(proc)
                servers.append((label, kind, port, functions is not None, proc.pid))
        for _ in range(args.rounds):
            for label, kind, port, triggered, pid in servers:
                if triggered:
                    pending_empty(port)
                delivered_before = delivered_total(port) if triggered else 0.0
                before = cpu_seconds(pid)
                r, created = creates_beside_events(port, args)
                requests = r["rps"] * args.duration + created
                server_cpu = (cpu_seconds(pid) - before) / requests * 1e6
                window = ""
                if triggered:
                    in_window = delivered_total(port) - delivered_before
                    window = f"; {in_window:.0f} of {created} events delivered in the window"
                rates[(label, kind)].append(r["rps"])
                cpu[(label, kind)].append(server_cpu)
                print(f"creates beside {created} events{label} with {kind:11}: {r['rps']:8.0f}/s  "
                      f"p99 {r['p99_ms']:.2f} ms; server CPU {server_cpu:.0f} µs a request{window}", flush=True)
                time.sleep(1)
        out = {}
        for label in builds:
            none, one = statistics.median(rates[(label, "none")]), statistics.median(rates[(label, "one trigger")])
            cnone, cone = statistics.median(cpu[(label, "none")]), statistics.median(cpu[(label, "one trigger")])
            print(f"beside events{label}: wrk creates/s median {none:.0f} without a trigger, {one:.0f} with one "
                  f"({args.rate} events/s): ratio {one / none:.3f} (target at least 0.85); server CPU a request "
                  f"(wrk's and the paced creates) {cnone:.0f} / {cone:.0f} µs", flush=True)
            out[label] = {"none": none, "one": one, "ratio": one / none, "cpu_none": cnone, "cpu_one": cone}
        return out
    finally:
        stop(procs)
        rproc.terminate()
        rproc.wait(timeout=10)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rate", type=int, default=1000, help="triggered creates per second in the latency run")
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--binary", help="a hearth binary to run instead of building one (release)")
    ap.add_argument("--baseline", help="an older hearth binary, measured beside this one in the same run")
    ap.add_argument("--part", choices=["latency", "beside", "throughput"], help="run only this part")
    args = ap.parse_args()
    binary = os.path.abspath(args.binary) if args.binary else built()
    print(f"load average {os.getloadavg()[0]:.1f}", flush=True)
    with tempfile.TemporaryDirectory(prefix="hearth-functions-bench-") as tmp:
        if not args.baseline:
            if args.part in (None, "latency"):
                latency(binary, tmp, args)
            if args.part in (None, "beside"):
                beside_events({"": binary}, tmp, args)
            if args.part in (None, "throughput"):
                throughput({"": binary}, tmp, args)
            return
        builds = {" (baseline)": os.path.abspath(args.baseline), " (this build)": binary}
        if args.part == "beside":
            beside_events(builds, tmp, args)
            return
        if args.part == "throughput":
            throughput(builds, tmp, args)
            return
        lat = {label: [] for label in builds}
        for _ in range(args.rounds):
            for label, path in builds.items():
                lat[label].append(latency(path, tmp, args, label))
                time.sleep(1)
        print(f"load average {os.getloadavg()[0]:.1f}", flush=True)
        med = {label: {k: statistics.median(r[k] for r in runs) for k in ("p50", "p99", "max", "wrk")}
               for label, runs in lat.items()}
        for label, m in med.items():
            print(f"latency{label} medians: p50 {m['p50']:.2f} ms, p99 {m['p99']:.2f} ms, max {m['max']:.2f} ms, "
                  f"wrk {m['wrk']:.0f} creates/s", flush=True)
        old, new = med[" (baseline)"], med[" (this build)"]
        print(f"latency p99 this build / baseline: {new['p99'] / old['p99']:.3f}; "
              f"p50: {new['p50'] / old['p50']:.3f}", flush=True)
        if args.part == "latency":
            return
        beside_events(builds, tmp, args)
        tp = throughput(builds, tmp, args)
        print(f"load average {os.getloadavg()[0]:.1f}", flush=True)
        print(f"throughput ratio (one trigger / none): baseline {tp[' (baseline)']['ratio']:.3f}, "
              f"this build {tp[' (this build)']['ratio']:.3f}", flush=True)


if __name__ == "__main__":
    main()
