#!/usr/bin/env python3
"""Adversarial connections: a `hearth serve` on loopback held open by clients that send half a head, half a
body, nothing at all, or malformed requests, while one well-behaved client keeps reading a document; then a
flood of transaction begins from one address without credentials.

It shows that the well-behaved client is still served (every answer, and its latency before, during and
after), that each bad connection gets its answer (408 for a slow head or body, 400 or 431 for a malformed
request) and is closed within the server's timeouts, and that the server's descriptors and memory come back
once they are. The server runs with short timeouts (flags below) so the run ends within a minute. The flood
shows the begins beyond the address's share refused (429), and a caller from another address and a signed-in
user still beginning.

    python3 bench/adversarial.py [--slow-headers 200] [--half-bodies 200] [--idle 200] [--malformed 200]
                                 [--timeout 5] [--idle-timeout 10] [--seconds 60] [--transactions 10050]

Python's standard library only. Uses `.build/release/hearth` if built, else `.build/debug/hearth` (or
`--binary`); loopback only, bounded in connections and time (it stops by itself, and stops the server).
"""
import argparse, http.client, json, os, resource, selectors, shutil, signal, socket, statistics, subprocess, sys
import tempfile, threading, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ADMIN_KEY = "hak_adversarial_" + os.urandom(16).hex()
AUTH = f"Authorization: Bearer {ADMIN_KEY}\r\n"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_resources(pid):
    """(open descriptors, resident memory in MiB) of a process."""
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    with open(f"/proc/{pid}/status") as f:
        rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    return fds, rss / 1024


def status_of(data):
    """The status code of the first answer in `data`, or None."""
    if data.startswith(b"HTTP/1."):
        try:
            return int(data.split(b" ", 2)[1])
        except (IndexError, ValueError):
            return None
    return None


class Adversary:
    """One bad connection: what it sends at once, then (slow headers) a byte a second until the server ends it."""

    def __init__(self, kind, port, first, trickle=False):
        self.kind, self.trickle = kind, trickle
        self.received = b""
        self.opened = time.monotonic()
        self.closed_after = None
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setblocking(False)
        self.pending = first
        self.next_byte = self.opened + 1
        # Timeouts run from the first byte sent (idle ones from the connection's opening).
        self.since = None if first else self.opened

    def pump(self, now):
        """Sends what is due; False once the connection can take no more."""
        if self.since is None:
            self.since = now
            self.next_byte = now + 1
        if self.trickle and now >= self.next_byte and not self.pending:
            self.pending = b"X"
            self.next_byte = now + 1
        while self.pending:
            try:
                sent = self.sock.send(self.pending)
            except BlockingIOError:
                return True
            except OSError:
                return False
            self.pending = self.pending[sent:]
        return True

    def read(self, now):
        try:
            data = self.sock.recv(65536)
        except BlockingIOError:
            return True
        except OSError:
            data = b""
        if data:
            self.received += data
            return True
        self.closed_after = now - (self.since or self.opened)
        self.sock.close()
        return False


def run_adversaries(port, args, results, started):
    """Opens the bad connections and serves them from one thread until the server has closed every one."""
    big_header = b"GET /v1/docs/bench/doc HTTP/1.1\r\nHost: t\r\nX-Big: " + b"a" * 200_000 + b"\r\n\r\n"
    many_headers = b"GET /v1/docs/bench/doc HTTP/1.1\r\nHost: t\r\n" + b"".join(b"X-H%d: v\r\n" % i for i in range(20_000)) + b"\r\n"
    malformed = [
        ("malformed: request line", b"GARBAGE\r\n\r\n"),
        ("malformed: Content-Length twice",
         b"PUT /v1/docs/bench/m HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}"),
        ("malformed: Content-Length and chunked",
         b"PUT /v1/docs/bench/m HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"),
        ("malformed: 200 KB header", big_header),
        ("malformed: 20,000 headers", many_headers),
    ]
    conns = []
    for _ in range(args.slow_headers):
        conns.append(Adversary("slow header", port, b"GET /v1/docs/bench/doc HTTP/1.1\r\nHost: t\r\n", trickle=True))
    for i in range(args.half_bodies):
        conns.append(Adversary("half body", port, (f"PUT /v1/docs/bench/half{i} HTTP/1.1\r\nHost: t\r\n{AUTH}"
                                                   "Content-Type: application/json\r\nContent-Length: 16000\r\n\r\n{").encode()))
    for _ in range(args.idle):
        conns.append(Adversary("idle", port, b""))
    for i in range(args.malformed):
        kind, data = malformed[i % len(malformed)]
        conns.append(Adversary(kind, port, data))
    started.set()
    selector = selectors.DefaultSelector()
    for c in conns:
        selector.register(c.sock, selectors.EVENT_READ, c)
    open_ = set(conns)
    deadline = time.monotonic() + args.seconds
    while open_ and time.monotonic() < deadline:
        now = time.monotonic()
        for c in list(open_):
            if not c.pump(now) and c.pending:
                c.pending = b""  # the server stopped reading: leave the rest unsent
        for key, _ in selector.select(timeout=0.2):
            c = key.data
            if not c.read(time.monotonic()):
                selector.unregister(c.sock)
                open_.discard(c)
    for c in open_:
        c.sock.close()
    results.extend(conns)


RULES = """rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /bench/{id} { allow read: if true; }
  }
}
"""


def begin_request(address, token=None):
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    return (f"POST /v1/transactions HTTP/1.1\r\nHost: t\r\nX-Forwarded-For: {address}\r\n{auth}"
            "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}").encode()


def pipelined_begins(port, address, count):
    """Sends `count` begins on one connection without waiting, then reads every answer: {status: count}."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sender = threading.Thread(target=lambda: sock.sendall(begin_request(address) * count))
    sender.start()
    received, statuses = b"", {}
    while sum(statuses.values()) < count:
        data = sock.recv(1 << 20)
        if not data:
            break
        received += data
        # Answers are small and whole once their body (after the blank line) is in.
        while True:
            head_end = received.find(b"\r\n\r\n")
            if head_end < 0:
                break
            head = received[:head_end].decode("latin-1")
            length = next((int(l.split(":", 1)[1]) for l in head.split("\r\n") if l.lower().startswith("content-length:")), 0)
            if len(received) < head_end + 4 + length:
                break
            status = int(head.split(" ", 2)[1])
            statuses[status] = statuses.get(status, 0) + 1
            received = received[head_end + 4 + length:]
    sender.join()
    sock.close()
    return statuses


def one_begin(port, address, token=None):
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(begin_request(address, token))
    status = status_of(sock.recv(65536))
    sock.close()
    return status


def metric(port, name):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/metrics")
    text = conn.getresponse().read().decode()
    conn.close()
    return next((float(l.split()[-1]) for l in text.splitlines() if l.startswith(name + " ")), None)


def transaction_flood(port, count, pid):
    """Floods begins from one address without credentials; then other callers begin."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("POST", "/v1/auth/signup", body=json.dumps({"email": "bench@example.com", "password": "a-long-password-1"}),
                 headers={"Content-Type": "application/json", "X-Forwarded-For": "192.0.2.50"})
    token = json.loads(conn.getresponse().read())["token"]
    conn.close()
    before = server_resources(pid)
    start = time.monotonic()
    statuses = pipelined_begins(port, "203.0.113.7", count)
    took = time.monotonic() - start
    during = server_resources(pid)
    print(f"\ntransaction flood: {count} begins pipelined on one connection from 203.0.113.7 without credentials, "
          f"answered in {took:.2f} s: " + ", ".join(f"{n}x {s}" for s, n in sorted(statuses.items())))
    print(f"  open transactions after it: {metric(port, 'hearth_open_transactions'):.0f}; server descriptors "
          f"{before[0]} -> {during[0]}, resident {before[1]:.0f} -> {during[1]:.0f} MiB")
    print(f"  then: a caller without credentials from 198.51.100.1 begins: {one_begin(port, '198.51.100.1')}; "
          f"a signed-in user from 203.0.113.7 begins: {one_begin(port, '203.0.113.7', token)}; "
          f"the flooding address again: {one_begin(port, '203.0.113.7')}")


def good_client(port, stop, samples):
    """Reads one document over a keep-alive connection, as fast as it is answered, recording (time, latency, ok)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    while not stop.is_set():
        start = time.monotonic()
        try:
            conn.request("GET", "/v1/docs/bench/doc", headers={"Authorization": "Bearer " + ADMIN_KEY})
            response = conn.getresponse()
            response.read()
            ok = response.status == 200
        except (OSError, http.client.HTTPException):
            ok = False
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        samples.append((start, time.monotonic() - start, ok))
        time.sleep(0.005)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary")
    parser.add_argument("--slow-headers", type=int, default=200)
    parser.add_argument("--half-bodies", type=int, default=200)
    parser.add_argument("--idle", type=int, default=200)
    parser.add_argument("--malformed", type=int, default=200)
    parser.add_argument("--timeout", type=float, default=5, help="the server's head and body timeouts, seconds")
    parser.add_argument("--idle-timeout", type=float, default=10, help="the server's idle timeout, seconds")
    parser.add_argument("--seconds", type=float, default=60, help="the longest the bad connections are kept")
    parser.add_argument("--transactions", type=int, default=10_050, help="begins in the flood (at most 20,000)")
    args = parser.parse_args()
    total = args.slow_headers + args.half_bodies + args.idle + args.malformed
    if total > 2_000 or args.transactions > 20_000:
        raise SystemExit("at most 2,000 bad connections and 20,000 begins")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, total + 256)), hard))

    binary = args.binary or next((p for p in (os.path.join(ROOT, ".build", c, "hearth") for c in ("release", "debug"))
                                  if os.path.exists(p)), None)
    if not binary:
        raise SystemExit("build hearth first: swift build [-c release] --product hearth")
    data = tempfile.mkdtemp(prefix="hearth-adversarial-")
    rules = os.path.join(data, "bench.rules")
    with open(rules, "w") as f:
        f.write(RULES)
    port = free_port()
    server = subprocess.Popen(
        [binary, "serve", "--port", str(port), "--data", os.path.join(data, "data"), "--log-level", "warning",
         "--idle-timeout", str(args.idle_timeout), "--request-head-timeout", str(args.timeout),
         "--request-body-timeout", str(args.timeout), "--rules", rules, "--trust-forwarded-for",
         "--argon2-memory", "64", "--argon2-iterations", "1"],
        env={**os.environ, "HEARTH_ADMIN_KEY": ADMIN_KEY}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = server.stdout.readline()
        if "listening" not in line:
            raise SystemExit(f"the server did not start: {line}")
        threading.Thread(target=lambda: [None for _ in server.stdout], daemon=True).start()
        admin = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        admin.request("PUT", "/v1/docs/bench/doc", body=json.dumps({"title": "still served"}),
                      headers={"Authorization": "Bearer " + ADMIN_KEY, "Content-Type": "application/json"})
        seeded = admin.getresponse()
        seeded.read()
        if seeded.status != 200:
            raise SystemExit(f"seeding the document failed: {seeded.status}")
        admin.close()

        print(f"binary {os.path.relpath(binary, ROOT)}, load average {os.getloadavg()[0]:.1f}, "
              f"timeouts: head and body {args.timeout:g} s, idle {args.idle_timeout:g} s")
        stop, samples, resources = threading.Event(), [], []
        t0 = time.monotonic()
        sampler_stop = threading.Event()

        def sample():
            while not sampler_stop.is_set():
                resources.append((time.monotonic() - t0, *server_resources(server.pid)))
                time.sleep(0.5)

        threading.Thread(target=sample, daemon=True).start()
        reader = threading.Thread(target=good_client, args=(port, stop, samples))
        reader.start()
        time.sleep(3)
        before = server_resources(server.pid)
        attack_start = time.monotonic()
        results, started = [], threading.Event()
        adversaries = threading.Thread(target=run_adversaries, args=(port, args, results, started))
        adversaries.start()
        started.wait()
        opened = time.monotonic()
        adversaries.join()
        attack_end = time.monotonic()
        time.sleep(3)
        after = server_resources(server.pid)
        stop.set()
        reader.join()
        sampler_stop.set()

        # The well-behaved client, before, during and after.
        def phase(lo, hi):
            part = [(lat, ok) for (t, lat, ok) in samples if lo <= t < hi]
            lats = sorted(lat * 1000 for lat, ok in part if ok)
            failed = sum(1 for _, ok in part if not ok)
            if not lats:
                return f"{len(part)} requests, {failed} failed"
            p99 = lats[min(len(lats) - 1, int(len(lats) * 0.99))]
            return (f"{len(part)} requests, {failed} failed, median {statistics.median(lats):.1f} ms, "
                    f"p99 {p99:.1f} ms, max {lats[-1]:.1f} ms")

        print(f"\nwell-behaved reader (one keep-alive connection, GET /v1/docs/bench/doc):")
        end = time.monotonic()
        print(f"  before ({attack_start - t0:.1f} s): {phase(0, attack_start)}")
        print(f"  during ({attack_end - attack_start:.1f} s): {phase(attack_start, attack_end)}")
        print(f"  after ({end - attack_end:.1f} s): {phase(attack_end, float('inf'))}")

        print(f"\nbad connections ({len(results)} opened in {opened - attack_start:.1f} s):")
        print("| kind | connections | answers | closed by the server | closed after (from its first byte): median / max s |")
        print("|---|---|---|---|---|")
        kinds = {}
        for c in results:
            kinds.setdefault(c.kind, []).append(c)
        for kind, conns in kinds.items():
            answers = {}
            for c in conns:
                s = status_of(c.received)
                answers[s] = answers.get(s, 0) + 1
            closed = [c.closed_after for c in conns if c.closed_after is not None]
            told = ", ".join(f"{n}x {s or 'none'}" for s, n in sorted(answers.items(), key=lambda x: str(x[0])))
            times = f"{statistics.median(closed):.1f} / {max(closed):.1f}" if closed else "-"
            print(f"| {kind} | {len(conns)} | {told} | {len(closed)} | {times} |")

        print("\nserver over time (s: descriptors, resident MiB): " + ", ".join(
            f"{t:.0f}: {fds}, {rss:.0f}" for t, fds, rss in resources[::4]))
        peak = max(resources, key=lambda r: r[1])
        print(f"\nserver: descriptors {before[0]} before, {peak[1]} at the peak (t={peak[0]:.0f} s), {after[0]} after; "
              f"resident memory {before[1]:.0f} MiB before, {max(r[2] for r in resources):.0f} MiB at most, "
              f"{after[1]:.0f} MiB after")
        listing = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        listing.request("GET", "/v1/docs/bench", headers={"Authorization": "Bearer " + ADMIN_KEY})
        docs = json.loads(listing.getresponse().read())["documents"]
        print(f"documents in bench/ after the run: {len(docs)} (the seeded one; no half-sent body was written)"
              if len(docs) == 1 else f"documents in bench/ after the run: {len(docs)}: HALF-SENT BODIES WERE WRITTEN")
        listing.close()
        if args.transactions:
            transaction_flood(port, args.transactions, server.pid)
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
