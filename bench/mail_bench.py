#!/usr/bin/env python3
"""Email throughput: messages per second through Hearth's outbox to a local SMTP server (aiosmtpd).

Starts aiosmtpd (Tests/peers/smtp_server.py, from .build/peers-venv: `bash Tests/peers/install.sh`) and
`hearth serve --smtp-url smtp://127.0.0.1:PORT`, queues N app emails with `POST /v1/messages/email` (one
address each, in requests of 50 addresses), and times from the first request until the SMTP server has
received them all and the outbox is empty. Each message is one SMTP connection (EHLO, MAIL, RCPT, DATA,
QUIT); four are sent at once. Everything stays on 127.0.0.1 and stops by itself.

    python3 bench/mail_bench.py [--messages 2000] [--config release] [--binary PATH]
"""
import argparse, json, os, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from docs_bench import built, free_port, http, stop, wait_up  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ADMIN_KEY = "hak_bench_" + os.urandom(16).hex()


def received(path):
    try:
        with open(path, "rb") as f:
            return sum(1 for _ in f)
    except FileNotFoundError:
        return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=2000)
    ap.add_argument("--config", default="release", choices=["release", "debug"])
    ap.add_argument("--binary", help="a hearth binary to run instead of building one")
    args = ap.parse_args()
    python = os.path.join(ROOT, ".build", "peers-venv", "bin", "python")
    if subprocess.run([python, "-c", "import aiosmtpd"], capture_output=True).returncode != 0:
        raise SystemExit("aiosmtpd is missing: run `bash Tests/peers/install.sh`")
    binary = args.binary or built(config=args.config)
    procs = []
    with tempfile.TemporaryDirectory() as tmp:
        try:
            smtp_port, port = free_port(), free_port()
            out = os.path.join(tmp, "received.ndjson")
            smtp = subprocess.Popen([python, os.path.join(ROOT, "Tests", "peers", "smtp_server.py"), "--port", str(smtp_port),
                                     "--out", out], stdout=subprocess.PIPE, text=True)
            procs.append(smtp)
            smtp.stdout.readline()  # "ready PORT"
            env = dict(os.environ, HEARTH_ADMIN_KEY=ADMIN_KEY)
            procs.append(subprocess.Popen([binary, "serve", "--data", os.path.join(tmp, "hearth"), "--port", str(port),
                                           "--log-level", "warning", "--smtp-url", f"smtp://127.0.0.1:{smtp_port}",
                                           "--mail-from", "Bench <bench@hearth.test>"], env=env, stdout=subprocess.DEVNULL))
            base = f"http://127.0.0.1:{port}"
            wait_up(f"{base}/healthz")
            auth = {"Authorization": f"Bearer {ADMIN_KEY}"}
            load = os.getloadavg()[0]
            start = time.time()
            for first in range(0, args.messages, 50):
                to = [f"user{i}@example.com" for i in range(first, min(args.messages, first + 50))]
                http("POST", f"{base}/v1/messages/email", {"to": to, "subject": "Benchmark", "text": "Hello " * 40}, auth)
            queued = time.time() - start
            deadline = time.time() + 600
            while received(out) < args.messages and time.time() < deadline:
                time.sleep(0.05)
            while time.time() < deadline:
                outbox = http("GET", f"{base}/v1/admin/outbox", None, auth)
                if not outbox["pending"]:
                    break
                time.sleep(0.05)
            elapsed = time.time() - start
            got = received(out)
            dead = len(outbox["dead"])
            print(json.dumps({"messages": args.messages, "received": got, "dead": dead, "queue_seconds": round(queued, 2),
                              "seconds": round(elapsed, 2), "messages_per_second": round(got / elapsed, 1),
                              "build": args.config, "load_average": round(load, 2)}))
        finally:
            stop(procs)


if __name__ == "__main__":
    main()
