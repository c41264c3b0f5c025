#!/usr/bin/env python3
"""Listen-session churn: does the server give back what a closed live-update session used?

Starts `hearth serve` on a free loopback port with a fresh data folder, then, for each of ROUNDS rounds, opens
SESSIONS WebSocket sessions on /v1/listen (BATCH at a time, all open at once), closes them, and prints the
server's RSS (VmRSS from /proc) and `hearth_listen_connections` after the round. Sessions are "bare" (the admin
key, no target), "query" (one target each, a query of its own, so a view and a load per session; closed with a
close handshake after the first snapshot) or "drop" (as query, but the socket is just closed), by --modes.
Growth that keeps its slope round after round is memory retained per session; growth that levels off is the
allocator keeping pages it has freed (--heap tells them apart: the allocator's bytes in use, through gdb).

    python3 bench/listen_churn.py [--binary .build/release/hearth] [--rounds 3] [--sessions 800]
                                  [--batch 100] [--modes bare,query,drop] [--idle 60] [--heap]

Python standard library only: the WebSocket client is a raw socket (an HTTP upgrade with Sec-WebSocket-Key,
masked text frames). Bounded: every socket read has a timeout, and the server is stopped at the end.
"""
import argparse, base64, json, os, shutil, signal, socket, struct, subprocess, sys, tempfile, time, urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from soak import ws_frame  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ADMIN_KEY = "hak_churn_" + os.urandom(16).hex()  # fresh per run, so no other server accepts it


def query(k):
    """A query of its own for session k: every query session has its own view, loaded for it alone."""
    return {"from": "items", "where": [["n", ">=", -k]], "orderBy": [["n", "asc"]], "limit": 5}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def request(port, method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method,
                                 headers={"Authorization": f"Bearer {ADMIN_KEY}", "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.read().decode()


def metric(port, name):
    for line in request(port, "GET", "/metrics").splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    return None


class Session:
    """One WebSocket session on /v1/listen."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET /v1/listen HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                           f"Authorization: Bearer {ADMIN_KEY}\r\n\r\n").encode())
        self.buffer = b""
        while b"\r\n\r\n" not in self.buffer:
            self.fill()
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        if not head.startswith(b"HTTP/1.1 101"):
            raise SystemExit(f"upgrade refused: {head.splitlines()[0].decode(errors='replace')}")

    def fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise EOFError("the server closed the connection")
        self.buffer += data

    def read_frame(self):
        """(opcode, payload) of the next frame; the server's frames are unmasked."""
        while len(self.buffer) < 2:
            self.fill()
        opcode, n = self.buffer[0] & 0x0F, self.buffer[1] & 0x7F
        start = 2
        if n == 126:
            while len(self.buffer) < 4:
                self.fill()
            n, start = struct.unpack(">H", self.buffer[2:4])[0], 4
        elif n == 127:
            while len(self.buffer) < 10:
                self.fill()
            n, start = struct.unpack(">Q", self.buffer[2:10])[0], 10
        while len(self.buffer) < start + n:
            self.fill()
        payload, self.buffer = self.buffer[start:start + n], self.buffer[start + n:]
        return opcode, payload

    def send_text(self, text):
        self.sock.sendall(ws_frame(0x1, text.encode()))

    def listen_query(self, target_id, k):
        self.send_text(json.dumps({"type": "listen", "id": target_id, "query": query(k)}))

    def wait_snapshot(self):
        while True:
            opcode, payload = self.read_frame()
            if opcode == 0x1:
                message = json.loads(payload)
                if message.get("type") == "error":
                    raise SystemExit(f"listen failed: {message}")
                return message
            if opcode == 0x8:
                raise EOFError("closed before the first snapshot")

    def close(self, handshake=True):
        """A close handshake: a close frame (1000), then the server's, then the socket; or only the socket."""
        if not handshake:
            self.sock.close()
            return
        try:
            self.sock.sendall(ws_frame(0x8, struct.pack(">H", 1000)))
            while True:
                opcode, _ = self.read_frame()
                if opcode == 0x8:
                    break
        except (OSError, EOFError):
            pass
        self.sock.close()


def round_of(port, mode, sessions, batch, first):
    done = 0
    while done < sessions:
        n = min(batch, sessions - done)
        open_ = [Session(port) for _ in range(n)]
        if mode in ("query", "drop"):
            for k, s in enumerate(open_):
                s.listen_query("q", first + done + k)
            for s in open_:
                s.wait_snapshot()
        for s in open_:
            s.close(handshake=mode != "drop")
        done += n


def heap_in_use(pid, errors):
    """The bytes glibc's allocator has handed out and not taken back, over every arena: unlike RSS, not
    raised by pages kept after a free. `malloc_stats` prints to the server's stderr."""
    subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", "call (void)malloc_stats()"], capture_output=True, timeout=120)
    time.sleep(0.2)
    errors.seek(0)
    total = errors.read().split("Total (incl. mmap):")[-1]
    for line in total.splitlines():
        if "in use bytes" in line:
            return int(line.split("=")[1])
    return -1


def settle(port, seconds=10):
    """Waits until the server counts no open listen connection (bounded)."""
    end = time.time() + seconds
    while time.time() < end:
        if metric(port, "hearth_listen_connections") == 0:
            return 0
        time.sleep(0.1)
    return metric(port, "hearth_listen_connections")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=None, help="the hearth binary (default: .build/release/hearth, else debug)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sessions", type=int, default=800)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--modes", default="bare,query,drop",
                    help="comma-separated, each --rounds rounds: bare (no target), query (a query of its own), "
                         "drop (as query, but the socket is closed without a close handshake)")
    ap.add_argument("--idle", type=float, default=60,
                    help="seconds to leave the server idle after the last round before measuring once more: what a "
                         "closed session leaves only until a timer of its fires is given back by then")
    ap.add_argument("--heap", action="store_true",
                    help="also print the allocator's bytes in use (glibc malloc_stats through gdb; needs gdb and ptrace)")
    args = ap.parse_args()
    if args.heap and shutil.which("gdb") is None:
        raise SystemExit("--heap needs gdb (apt-get install gdb)")
    binary = args.binary or next((p for p in [os.path.join(ROOT, ".build", c, "hearth") for c in ("release", "debug")]
                                  if os.path.exists(p)), None)
    if binary is None:
        raise SystemExit("no hearth binary: swift build -c release --product hearth")
    tmp = tempfile.mkdtemp(prefix="hearth-churn-")
    port = free_port()
    env = dict(os.environ, HEARTH_ADMIN_KEY=ADMIN_KEY)
    errors = open(os.path.join(tmp, "stderr"), "w+")
    server = subprocess.Popen([binary, "serve", "--data", os.path.join(tmp, "data"), "--port", str(port),
                               "--log-level", "warning"], env=env, stdout=subprocess.DEVNULL, stderr=errors)
    try:
        end = time.time() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1).read()
                break
            except Exception:
                if time.time() > end or server.poll() is not None:
                    raise SystemExit("the server did not come up")
                time.sleep(0.1)
        request(port, "POST", "/v1/commit",
                {"writes": [{"set": f"items/i{n}", "data": {"n": n, "label": f"item {n}"}} for n in range(10)]})
        print(f"{binary}, load average {os.getloadavg()[0]:.1f}, {args.sessions} sessions a round, {args.batch} open at once",
              flush=True)
        start = rss_kib(server.pid)
        heap = f", heap in use {heap_in_use(server.pid, errors) // 1024} KiB" if args.heap else ""
        print(f"start: RSS {start} KiB{heap}", flush=True)
        for mode in args.modes.split(","):
            before = rss_kib(server.pid)
            for r in range(1, args.rounds + 1):
                previous = rss_kib(server.pid)
                t0 = time.time()
                round_of(port, mode, args.sessions, args.batch, first=r * args.sessions)
                still_open = settle(port)
                rss = rss_kib(server.pid)
                heap = f", heap in use {heap_in_use(server.pid, errors) // 1024} KiB" if args.heap else ""
                print(f"{mode} round {r}: RSS {rss} KiB ({rss - previous:+d} KiB, {(rss - previous) * 1024 / args.sessions:+.0f} B/session){heap}, "
                      f"hearth_listen_connections {still_open:g}, {time.time() - t0:.1f} s", flush=True)
            after = rss_kib(server.pid)
            print(f"{mode}: {after - before:+d} KiB over {args.rounds} rounds "
                  f"({(after - before) * 1024 / (args.rounds * args.sessions):+.0f} B/session)", flush=True)
        if args.idle > 0:
            time.sleep(args.idle)
            rss = rss_kib(server.pid)
            heap = f", heap in use {heap_in_use(server.pid, errors) // 1024} KiB" if args.heap else ""
            print(f"after {args.idle:g} s idle: RSS {rss} KiB ({rss - start:+d} KiB since the start){heap}", flush=True)
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
