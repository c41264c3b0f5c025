#!/usr/bin/env python3
"""A TLS client for the end-to-end tests, on Python's ssl module alone.

tls_client.py cert PORT CA         prints the DER of the certificate 127.0.0.1:PORT serves, in hex
tls_client.py wss PORT CA TOKEN    opens /v1/listen over TLS, sends a ping, prints the answer frame
tls_client.py version PORT CA V    tries a handshake with only TLS version V (1.0, 1.1, 1.2, 1.3); prints ok or refused
tls_client.py listen PORT CA TOKEN DOC READY
                                   opens /v1/listen, listens to document DOC, creates the file READY once its
                                   snapshot came, then prints every text frame on a line until the server closes
                                   (then `close CODE`) or 60 s pass; CA `-` is plain TCP, for the same check
                                   without TLS
tls_client.py download PORT CA TOKEN PATH READY GO
                                   GETs PATH with a small receive buffer, reads the head and 1 MiB of the body,
                                   creates the file READY, then waits until the file GO exists and reads the
                                   rest: prints the status, the body's length and its SHA-256; GO `abandon`
                                   closes the connection at READY instead, mid-download

Only CA is trusted and the name 127.0.0.1 is checked, as an app's transport security does.
"""
import base64
import hashlib
import os
import socket
import ssl
import sys
import time


def connect(port, ca, version=None, receive_buffer=None):
    raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    raw.settimeout(60)
    if receive_buffer is not None:
        # Before connecting, so the window announced is the small one: the server cannot send far ahead.
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    raw.connect(("127.0.0.1", port))
    if ca == "-":
        return raw
    context = ssl.create_default_context(cafile=ca)
    if version is not None:
        # The client itself would refuse versions before 1.2 at the default security level: allow them, so
        # that a refusal is the server's.
        context.set_ciphers("DEFAULT:@SECLEVEL=0")
        context.minimum_version = version
        context.maximum_version = version
    return context.wrap_socket(raw, server_hostname="127.0.0.1")


def read_until(sock, marker):
    data = b""
    while marker not in data:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    return data


def read_frame(sock, buffered):
    return read_frame_and_rest(sock, buffered)[1]


def receive(sock):
    chunk = sock.recv(4096)
    if not chunk:
        raise EOFError("the server closed the connection")
    return chunk


def read_frame_and_rest(sock, buffered):
    """The next frame's opcode and payload, and the bytes read past it."""
    data = buffered
    while len(data) < 2:
        data += receive(sock)
    length = data[1] & 0x7F
    start = 2
    if length == 126:
        while len(data) < 4:
            data += receive(sock)
        length = int.from_bytes(data[2:4], "big")
        start = 4
    elif length == 127:
        while len(data) < 10:
            data += receive(sock)
        length = int.from_bytes(data[2:10], "big")
        start = 10
    while len(data) < start + length:
        data += receive(sock)
    return data[0] & 0x0F, data[start:start + length], data[start + length:]


def upgrade(sock, port, token):
    """The WebSocket handshake on /v1/listen; answers the bytes read past the answer's head, or None."""
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall((f"GET /v1/listen HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                  f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                  f"Authorization: Bearer {token}\r\n\r\n").encode())
    head = read_until(sock, b"\r\n\r\n")
    status = head.split(b"\r\n", 1)[0].decode()
    if " 101 " not in status + " ":
        print(status)
        return None
    return head.split(b"\r\n\r\n", 1)[1]


def send_text(sock, payload):
    mask = os.urandom(4)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    header = bytes([0x81, 0x80 | len(payload)]) if len(payload) < 126 else bytes([0x81, 0xFE]) + len(payload).to_bytes(2, "big")
    sock.sendall(header + mask + masked)


def main():
    command, port, ca = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    if command == "cert":
        with connect(port, ca) as sock:
            print(sock.getpeercert(binary_form=True).hex())
    elif command == "wss":
        token = sys.argv[4]
        with connect(port, ca) as sock:
            rest = upgrade(sock, port, token)
            if rest is None:
                return 1
            send_text(sock, b'{"type": "ping"}')
            print(read_frame(sock, rest).decode())
    elif command == "version":
        versions = {"1.0": ssl.TLSVersion.TLSv1, "1.1": ssl.TLSVersion.TLSv1_1,
                    "1.2": ssl.TLSVersion.TLSv1_2, "1.3": ssl.TLSVersion.TLSv1_3}
        try:
            with connect(port, ca, versions[sys.argv[4]]):
                print("ok")
        except (ssl.SSLError, ConnectionResetError) as error:
            print("refused", error)
    elif command == "listen":
        token, doc, ready = sys.argv[4], sys.argv[5], sys.argv[6]
        with connect(port, ca) as sock:
            rest = upgrade(sock, port, token)
            if rest is None:
                return 1
            send_text(sock, ('{"type": "listen", "id": "d", "doc": "%s"}' % doc).encode())
            try:
                while True:
                    opcode, payload, rest = read_frame_and_rest(sock, rest)
                    if opcode == 8:
                        print("close", int.from_bytes(payload[:2], "big") if len(payload) >= 2 else "none", flush=True)
                        break
                    if opcode == 1:
                        print(payload.decode(), flush=True)
                        if b'"snapshot"' in payload and not os.path.exists(ready):
                            open(ready, "w").close()
            except (EOFError, socket.timeout, ssl.SSLError, ConnectionResetError) as error:
                print("ended", error, flush=True)
    elif command == "download":
        token, path, ready, go = sys.argv[4], sys.argv[5], sys.argv[6], sys.argv[7]
        sock = connect(port, ca, receive_buffer=65536)
        sock.sendall((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n\r\n").encode())
        head, first = read_until(sock, b"\r\n\r\n").split(b"\r\n\r\n", 1)
        body = bytearray(first)
        status = head.split(b" ")[1].decode()
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        while len(body) < min(length, 1 << 20):
            chunk = sock.recv(1 << 16)
            if not chunk:
                break
            body += chunk
        open(ready, "w").close()
        if go == "abandon":
            sock.close()
            print(status, "abandoned")
            return 0
        deadline = time.time() + 60
        while not os.path.exists(go) and time.time() < deadline:
            time.sleep(0.02)
        try:
            while len(body) < length:
                chunk = sock.recv(1 << 16)
                if not chunk:
                    raise EOFError("the server closed the connection")
                body += chunk
        except (EOFError, socket.timeout, ssl.SSLError, ConnectionResetError) as error:
            print("ended", error, flush=True)
        sock.close()
        print(status, len(body), hashlib.sha256(body).hexdigest())
    else:
        print("unknown command", command)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
