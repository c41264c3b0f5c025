#!/usr/bin/env python3
"""Soak test: a release `hearth serve` under a mixed load for a bounded time, on loopback, watching its
resources.

Every cycle (10 s) runs, at once: HTTP workers (creates, gets, patches with transforms, queries, commits,
deletes, signed-in users' reads under rules) and a wave of WebSocket listeners (users' tokens, a query and a
document target each) that read for a few seconds and then leave, half with a close frame and half by
dropping the socket. Every two seconds the script samples the server's resident memory, open file
descriptors, threads, and the database and WAL sizes. At the end, with every client gone, it checks that
descriptors are back near where they started, that memory stopped growing, and that the server still answers.

    python3 bench/soak.py [--seconds 120] [--listeners 200] [--workers 4]

Bounded in time and connections; stops the server itself. Prints the samples and a verdict.
"""
import argparse, base64, http.client, json, os, random, selectors, shutil, socket, struct, subprocess, sys
import tempfile, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from docs_bench import built, free_port, stop, wait_up  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ADMIN_KEY = "hak_soak_" + os.urandom(16).hex()
RULES = """rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /soak/{id} {
      allow read: if request.auth != null;
    }
    match /private/{uid} {
      allow read, write: if request.auth != null && request.auth.uid == uid;
    }
  }
}
"""


class Client:
    """One keep-alive HTTP connection."""

    def __init__(self, port, token):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.token = token

    def call(self, method, path, body=None, token=None):
        headers = {"Authorization": "Bearer " + (token or self.token)}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        try:
            self.conn.request(method, path, body=data, headers=headers)
            response = self.conn.getresponse()
            payload = response.read()
            return response.status, payload
        except (ConnectionError, http.client.HTTPException, OSError):
            self.conn.close()
            return 0, b""


def stat(pid):
    with open(f"/proc/{pid}/status") as f:
        fields = dict(line.split(":", 1) for line in f if ":" in line)
    rss = int(fields["VmRSS"].split()[0]) // 1024
    threads = int(fields["Threads"])
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    return rss, fds, threads


def file_mb(path):
    try:
        return os.path.getsize(path) / 1e6
    except OSError:
        return 0.0


# A minimal WebSocket client (RFC 6455): enough to open a listener, send text, and count frames.

def ws_open(port, token):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall((f"GET /v1/listen HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer {token}\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(4096)
        if not chunk:
            raise ConnectionError("closed during the upgrade")
        head += chunk
    if not head.startswith(b"HTTP/1.1 101"):
        raise ConnectionError(head.split(b"\r\n")[0].decode())
    s.setblocking(False)
    return s


def ws_frame(opcode, payload):
    """A client frame (RFC 6455 §5.2): FIN, opcode, masked payload."""
    mask = os.urandom(4)
    n = len(payload)
    header = bytes([0x80 | opcode])
    if n < 126:
        header += bytes([0x80 | n])
    elif n < 65536:
        header += bytes([0x80 | 126]) + struct.pack("!H", n)
    else:
        header += bytes([0x80 | 127]) + struct.pack("!Q", n)
    return header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def ws_send(s, text):
    s.setblocking(True)
    s.sendall(ws_frame(1, text.encode()))
    s.setblocking(False)


def listener_wave(port, tokens, count, read_seconds, totals):
    """Opens `count` listeners, reads for `read_seconds`, then closes them (half politely)."""
    sel = selectors.DefaultSelector()
    socks = []
    for i in range(count):
        try:
            s = ws_open(port, tokens[i % len(tokens)][1])
        except OSError as e:
            totals["ws_errors"] += 1
            continue
        uid = tokens[i % len(tokens)][0]
        ws_send(s, json.dumps({"type": "listen", "id": "q", "query": {
            "from": "soak", "where": [["n", "<", 50]], "orderBy": [["n", "asc"]], "limit": 10}}))
        ws_send(s, json.dumps({"type": "listen", "id": "d", "doc": f"private/{uid}"}))
        sel.register(s, selectors.EVENT_READ)
        socks.append(s)
    deadline = time.time() + read_seconds
    while time.time() < deadline:
        for key, _ in sel.select(timeout=0.2):
            try:
                data = key.fileobj.recv(65536)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                data = b""
            if not data:
                sel.unregister(key.fileobj)
                continue
            totals["ws_bytes"] += len(data)
    for i, s in enumerate(socks):
        try:
            if i % 2 == 0:
                s.setblocking(True)
                s.sendall(ws_frame(8, struct.pack("!H", 1000)))
            s.close()
        except OSError:
            pass
    sel.close()
    totals["ws_opened"] += len(socks)


def http_worker(port, tokens, done, totals, seed):
    rng = random.Random(seed)
    admin = Client(port, ADMIN_KEY)
    user_uid, user_token = tokens[seed % len(tokens)]
    user = Client(port, user_token)
    made = []
    while not done.is_set():
        op = rng.random()
        if op < 0.3:
            status, body = admin.call("POST", "/v1/docs/soak", {"n": rng.randrange(100), "title": "soak " * 10,
                                                                "tags": ["a", "b"], "at": {"$serverTimestamp": True}})
            if status == 200:
                made.append(json.loads(body)["path"])
        elif op < 0.5 and made:
            status, _ = admin.call("GET", "/v1/docs/" + rng.choice(made))
        elif op < 0.6 and made:
            status, _ = admin.call("PATCH", "/v1/docs/" + rng.choice(made), {"n": {"$increment": 1}})
        elif op < 0.7:
            status, _ = user.call("POST", "/v1/query", {"from": "soak", "where": [["n", "<", 50]],
                                                       "orderBy": [["n", "asc"]], "limit": 20})
        elif op < 0.8:
            status, _ = user.call("PUT", f"/v1/docs/private/{user_uid}", {"seen": rng.randrange(1000)})
        elif op < 0.9 and len(made) > 10:
            doomed = [made.pop(rng.randrange(len(made))) for _ in range(3)]
            status, _ = admin.call("POST", "/v1/commit", {"writes": [{"delete": p} for p in doomed]})
        else:
            status, _ = admin.call("POST", "/v1/aggregate", {"query": {"from": "soak"},
                                                             "aggregations": {"n": {"count": {}}}})
        totals["http"] += 1
        if status == 0 or status >= 500:
            totals["http_errors"] += 1


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=120)
    parser.add_argument("--listeners", type=int, default=200)
    parser.add_argument("--workers", type=int, default=4)
    args = parser.parse_args()

    binary = built()
    tmp = tempfile.mkdtemp(prefix="hearth-soak-")
    rules = os.path.join(tmp, "soak.rules")
    with open(rules, "w") as f:
        f.write(RULES)
    port = free_port()
    data = os.path.join(tmp, "data")
    server = subprocess.Popen([binary, "serve", "--data", data, "--port", str(port), "--rules", rules,
                               "--log-level", "warning"], env=dict(os.environ, HEARTH_ADMIN_KEY=ADMIN_KEY),
                              stdout=subprocess.DEVNULL)
    try:
        wait_up(f"http://127.0.0.1:{port}/healthz")
        setup = Client(port, ADMIN_KEY)
        tokens = []
        for i in range(10):
            status, body = setup.call("POST", "/v1/auth/signup", {"email": f"soak{i}@example.com",
                                                                  "password": "a long soak password"})
            answer = json.loads(body)
            tokens.append((answer["user"]["uid"], answer["token"]))
            setup.call("PUT", f"/v1/docs/private/{answer['user']['uid']}", {"seen": 0})
        base = stat(server.pid)
        print(f"server pid {server.pid}, port {port}; at start: RSS {base[0]} MiB, {base[1]} fds, {base[2]} threads")
        print(f"{'t s':>5} {'RSS MiB':>8} {'fds':>5} {'threads':>7} {'db MB':>7} {'wal MB':>7} {'http req':>9} "
              f"{'http err':>8} {'ws open':>7}")
        totals = {"http": 0, "http_errors": 0, "ws_opened": 0, "ws_errors": 0, "ws_bytes": 0}
        done = threading.Event()
        workers = [threading.Thread(target=http_worker, args=(port, tokens, done, totals, k), daemon=True)
                   for k in range(args.workers)]
        for w in workers:
            w.start()

        def waves():
            while not done.is_set():
                listener_wave(port, tokens, args.listeners, 6, totals)
                done.wait(4)
        wave_thread = threading.Thread(target=waves, daemon=True)
        wave_thread.start()

        samples = []
        start = time.time()
        while time.time() - start < args.seconds:
            time.sleep(2)
            rss, fds, threads = stat(server.pid)
            row = (time.time() - start, rss, fds, threads, file_mb(os.path.join(data, "hearth.sqlite")),
                   file_mb(os.path.join(data, "hearth.sqlite-wal")))
            samples.append(row)
            print(f"{row[0]:5.0f} {rss:8d} {fds:5d} {threads:7d} {row[4]:7.1f} {row[5]:7.1f} {totals['http']:9d} "
                  f"{totals['http_errors']:8d} {totals['ws_opened']:7d}")
        done.set()
        for w in workers:
            w.join(timeout=30)
        wave_thread.join(timeout=30)
        time.sleep(3)  # let the server notice the last sockets closing
        rss, fds, threads = stat(server.pid)
        status, _ = Client(port, ADMIN_KEY).call("GET", "/healthz")
        print(f"after the load: RSS {rss} MiB, {fds} fds, {threads} threads; /healthz {status}")
        print(f"totals: {totals['http']} HTTP requests ({totals['http_errors']} failed), "
              f"{totals['ws_opened']} listeners opened ({totals['ws_errors']} refused), "
              f"{totals['ws_bytes'] / 1e6:.1f} MB of frames read")

        half = [s[1] for s in samples[len(samples) // 2:]]
        growth = (max(half) - half[0]) / max(1, half[0]) if half else 0
        problems = []
        if fds > base[1] + 8:
            problems.append(f"{fds - base[1]} more file descriptors than at start")
        if growth > 0.25:
            problems.append(f"memory grew {growth:.0%} over the second half")
        if status != 200:
            problems.append(f"/healthz answered {status}")
        if totals["http_errors"]:
            problems.append(f"{totals['http_errors']} HTTP requests failed or answered 5xx")
        if totals["ws_errors"]:
            problems.append(f"{totals['ws_errors']} listeners could not connect")
        print("verdict:", "; ".join(problems) if problems else "ok (descriptors back to start, memory flat, no errors)")
        return 1 if problems else 0
    finally:
        stop([server], timeout=30)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
