"""A Standard Webhooks receiver for Hearth's end-to-end tests.

Verifies every request with the `standardwebhooks` library (the reference implementation's Python package)
and appends what arrived to --out as one JSON line: the headers, the body, and whether it verified.
Answers from --answers, a JSON file the test may rewrite at any time: {"queue": [answer...], "default": answer},
each answer {"status": 200, "body": {...}, "delay": seconds}; the first queued answer is used (and removed)
before the default.
"""
import argparse
import os
import signal
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--secret", required=True)
parser.add_argument("--out", required=True)
parser.add_argument("--answers", required=True)
args = parser.parse_args()

webhook = Webhook(args.secret)
lock = threading.Lock()


def next_answer():
    with lock:
        try:
            with open(args.answers) as f:
                answers = json.load(f)
        except (OSError, ValueError):
            answers = {}
        queue = answers.get("queue", [])
        if queue:
            answer = queue.pop(0)
            answers["queue"] = queue
            with open(args.answers + ".tmp", "w") as f:
                json.dump(answers, f)

            os.replace(args.answers + ".tmp", args.answers)
            return answer
        return answers.get("default", {"status": 200})


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        length = int(self.headers.get("content-length", "0"))
        body = self.rfile.read(length)
        headers = {k: v for k, v in self.headers.items()}
        try:
            webhook.verify(body, headers)
            verified, error = True, None
        except WebhookVerificationError as e:
            verified, error = False, str(e)
        answer = next_answer()
        record = {"path": self.path, "headers": {k.lower(): v for k, v in headers.items()},
                  "body": body.decode("utf-8", "replace"), "verified": verified, "error": error,
                  "status": answer.get("status", 200)}
        with lock:
            with open(args.out, "a") as f:
                f.write(json.dumps(record) + "\n")
        if answer.get("delay"):
            time.sleep(answer["delay"])
        payload = json.dumps(answer["body"]).encode() if "body" in answer else b""
        self.send_response(answer.get("status", 200))
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *a):
        pass


# The test process may have started this one with SIGTERM blocked: block it here too (threads inherit the
# mask), serve on a thread, and wait for it, so that SIGTERM stops the receiver at once.
stop_signals = {signal.SIGTERM, signal.SIGINT}
signal.pthread_sigmask(signal.SIG_BLOCK, stop_signals)
server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
server.daemon_threads = True
threading.Thread(target=server.serve_forever, daemon=True).start()
print(f"ready {args.port}", flush=True)
signal.sigwait(stop_signals)
