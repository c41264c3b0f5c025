"""A local SMTP server for Hearth's end-to-end tests, on aiosmtpd.

Prints "ready PORT" once it listens, then appends one JSON line per message it accepts to --out:
{"from", "to": [...], "data", "tls", "user"}. Options make it behave like the servers Hearth must cope with:
STARTTLS offered or required, implicit TLS, AUTH required, recipients refused, connections dropped before
the reply to the end of DATA.
"""
import argparse
import json
import signal
import ssl
import sys

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult


class Handler:
    def __init__(self, args):
        self.out = args.out
        self.reject = set(args.reject)
        self.drops = args.drop_data

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address in self.reject:
            return "550 5.1.1 <%s>: no such user here" % address
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        if self.drops > 0:
            # The whole message arrived but no reply will: the client cannot know it was taken, and it was not.
            self.drops -= 1
            server.transport.abort()
            return "421 4.4.2 dropped"
        user = None
        if session.auth_data is not None:
            user = session.auth_data.login.decode("utf-8")
        record = {
            "from": envelope.mail_from,
            "to": envelope.rcpt_tos,
            "data": envelope.original_content.decode("utf-8", "replace"),
            "tls": server.transport.get_extra_info("ssl_object") is not None,
            "user": user,
        }
        with open(self.out, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")
        return "250 2.0.0 queued"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--cert")
    p.add_argument("--key")
    p.add_argument("--require-starttls", action="store_true")
    p.add_argument("--implicit-tls", action="store_true")
    p.add_argument("--auth", help="USER:PASSWORD; AUTH is then required")
    p.add_argument("--reject", action="append", default=[], help="a recipient refused with 550")
    p.add_argument("--drop-data", type=int, default=0, help="drop this many connections at the end of DATA")
    args = p.parse_args()

    context = None
    if args.cert:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(args.cert, args.key)
    kwargs = {}
    if args.auth:
        user, password = args.auth.split(":", 1)

        def authenticator(server, session, envelope, mechanism, auth_data):
            ok = auth_data.login.decode() == user and auth_data.password.decode() == password
            return AuthResult(success=ok, handled=False, auth_data=auth_data if ok else None)

        # Over implicit TLS aiosmtpd does not see the TLS (it only tracks STARTTLS), so it must not ask for it.
        kwargs.update(authenticator=authenticator, auth_required=True, auth_require_tls=not args.implicit_tls)
    if args.implicit_tls:
        controller = Controller(Handler(args), hostname="127.0.0.1", port=args.port, ssl_context=context, **kwargs)
    else:
        controller = Controller(Handler(args), hostname="127.0.0.1", port=args.port, tls_context=context,
                                require_starttls=args.require_starttls, **kwargs)
    # Blocked before the server's thread starts (threads inherit the mask), then awaited here: SIGTERM stops it.
    stop_signals = {signal.SIGTERM, signal.SIGINT}
    signal.pthread_sigmask(signal.SIG_BLOCK, stop_signals)
    controller.start()
    print("ready %d" % args.port, flush=True)
    signal.sigwait(stop_signals)
    controller.stop()


if __name__ == "__main__":
    sys.exit(main())
