#!/usr/bin/env python3
"""Function timers at scale: how late each of N timers fires, and the server's memory while they are pending.

Starts a local webhook receiver (asyncio, in this process: it answers 204 at once and records when each event
arrived) and `hearth serve --functions` with one timer on `timed/{id}`, field `at`. Arms N timers with
`POST /v1/commit` (500 documents a commit), their times spread evenly over `--window` seconds starting
`--lead` seconds after the script starts (so that arming ends before the first one is due), then waits for
every event. Lateness is the arrival at the receiver minus the time in the document (the event's `time`): it
holds the firing, the commit that queues the event and the delivery. Also reports the server's resident memory
(VmRSS) before arming, once all are armed (the timers pending, `hearth_function_timers_pending`), and its peak
while they fire, and the largest backlog of timers due but not yet fired (from `hearth_function_timers_fired_total`,
sampled every 0.25 s). Everything stays on 127.0.0.1 and stops by itself.

    python3 bench/timers_bench.py [--timers 100000] [--window 60] [--lead 60] [--config release] [--binary PATH]
"""
import argparse, asyncio, base64, json, os, re, subprocess, sys, tempfile, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from docs_bench import built, free_port, http, stop, wait_up  # noqa: E402

ADMIN_KEY = "hak_bench_" + os.urandom(16).hex()


class Receiver:
    """A minimal HTTP/1.1 server with keep-alive: records (arrival, body) and answers 204."""

    def __init__(self, port):
        self.port = port
        self.arrivals = []
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        threading.Thread(target=self.run, daemon=True).start()
        self.ready.wait()

    def run(self):
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(asyncio.start_server(self.handle, "127.0.0.1", self.port, backlog=256))
        self.ready.set()
        self.loop.run_until_complete(server.serve_forever())

    async def handle(self, reader, writer):
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(re.search(rb"(?i)content-length:\s*(\d+)", head).group(1))
                body = await reader.readexactly(length)
                self.arrivals.append((time.time(), body))
                writer.write(b"HTTP/1.1 204 No Content\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError, AttributeError):
            writer.close()


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def metric(base, name):
    text = http_text(f"{base}/metrics")
    m = re.search(rf"^{name} (\S+)$", text, re.M)
    return float(m.group(1)) if m else None


def http_text(url):
    import urllib.request
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {ADMIN_KEY}"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.read().decode()


def rfc3339(t):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(round((t % 1) * 1e6)):06d}Z"


def parse_time(text):
    import calendar
    whole, frac = text.rstrip("Z").split(".")
    return calendar.timegm(time.strptime(whole, "%Y-%m-%dT%H:%M:%S")) + int(frac) / 1e6


def percentile(values, p):
    return values[min(len(values) - 1, int(len(values) * p))] if values else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--timers", type=int, default=100_000)
    ap.add_argument("--window", type=float, default=60, help="seconds over which the timers' times are spread")
    ap.add_argument("--lead", type=float, default=60, help="seconds from the start to the first timer's time")
    ap.add_argument("--config", default="release", choices=["release", "debug"])
    ap.add_argument("--binary", help="a hearth binary to run instead of building one")
    args = ap.parse_args()
    binary = args.binary or built(config=args.config)
    receiver = Receiver(free_port())
    procs = []
    with tempfile.TemporaryDirectory() as tmp:
        try:
            secret = "whsec_" + base64.b64encode(os.urandom(32)).decode()
            functions = os.path.join(tmp, "functions.json")
            with open(functions, "w") as f:
                json.dump({"endpoints": {"bench": {"url": f"http://127.0.0.1:{receiver.port}/hooks", "secret": secret}},
                           "timers": [{"name": "due", "path": "timed/{id}", "field": "at", "endpoint": "bench"}]}, f)
            port = free_port()
            env = dict(os.environ, HEARTH_ADMIN_KEY=ADMIN_KEY)
            server = subprocess.Popen([binary, "serve", "--data", os.path.join(tmp, "hearth"), "--port", str(port),
                                       "--log-level", "warning", "--functions", functions], env=env, stdout=subprocess.DEVNULL)
            procs.append(server)
            base = f"http://127.0.0.1:{port}"
            wait_up(f"{base}/healthz")
            load = os.getloadavg()[0]
            start = time.time()
            first_due = start + args.lead
            step = args.window / max(1, args.timers - 1)
            rss_before = rss_mib(server.pid)
            auth = {"Authorization": f"Bearer {ADMIN_KEY}"}
            late_writes = 0
            for first in range(0, args.timers, 500):
                writes = []
                for i in range(first, min(args.timers, first + 500)):
                    writes.append({"set": f"timed/t{i}", "data": {"at": {"$timestamp": rfc3339(first_due + i * step)}, "n": i}})
                http("POST", f"{base}/v1/commit", {"writes": writes}, auth)
                if time.time() > first_due + first * step:
                    late_writes += 1
            armed_seconds = time.time() - start
            pending = metric(base, "hearth_function_timers_pending")
            rss_armed = rss_mib(server.pid)
            rss_peak, backlog_max = rss_armed, 0
            last_due = first_due + (args.timers - 1) * step
            deadline = last_due + 600
            while len(receiver.arrivals) < args.timers and time.time() < deadline:
                now = time.time()
                due_by_now = 0 if now < first_due else min(args.timers, int((now - first_due) / step) + 1)
                fired = metric(base, "hearth_function_timers_fired_total") or 0
                backlog_max = max(backlog_max, due_by_now - int(fired))
                rss_peak = max(rss_peak, rss_mib(server.pid))
                time.sleep(0.25)
            rss_after = rss_mib(server.pid)
            lateness = sorted(arrival - parse_time(json.loads(body)["time"]) for arrival, body in receiver.arrivals)
            print(json.dumps({
                "timers": args.timers, "received": len(receiver.arrivals), "window_s": args.window,
                "arming_s": round(armed_seconds, 1), "batches_written_after_their_first_time": late_writes,
                "pending_after_arming": pending,
                "lateness_ms": {"p50": round(percentile(lateness, 0.5) * 1000, 1), "p99": round(percentile(lateness, 0.99) * 1000, 1),
                                "max": round(lateness[-1] * 1000, 1) if lateness else None,
                                "min": round(lateness[0] * 1000, 1) if lateness else None},
                "over_1s": sum(1 for x in lateness if x > 1.0), "fire_backlog_max": backlog_max,
                "rss_mib": {"before": round(rss_before, 1), "armed": round(rss_armed, 1), "peak_firing": round(rss_peak, 1),
                            "after": round(rss_after, 1)},
                "build": args.config, "load_average": round(load, 2)}))
        finally:
            stop(procs)


if __name__ == "__main__":
    main()
