#!/usr/bin/env python3
"""A TLS client for the end-to-end tests, on Python's ssl module alone.

tls_client.py cert PORT CA         prints the DER of the certificate 127.0.0.1:PORT serves, in hex
tls_client.py wss PORT CA TOKEN    opens /v1/listen over TLS, sends a ping, prints the answer frame
tls_client.py version PORT CA V    tries a handshake with only TLS version V (1.0, 1.1, 1.2, 1.3); prints ok or refused

Only CA is trusted and the name 127.0.0.1 is checked, as an app's transport security does.
"""
import base64
import os
import socket
import ssl
import sys


def connect(port, ca, version=None):
    context = ssl.create_default_context(cafile=ca)
    if version is not None:
        # The client itself would refuse versions before 1.2 at the default security level: allow them, so
        # that a refusal is the server's.
        context.set_ciphers("DEFAULT:@SECLEVEL=0")
        context.minimum_version = version
        context.maximum_version = version
    raw = socket.create_connection(("127.0.0.1", port), timeout=30)
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
    data = buffered
    while len(data) < 2:
        data += sock.recv(4096)
    length = data[1] & 0x7F
    start = 2
    if length == 126:
        while len(data) < 4:
            data += sock.recv(4096)
        length = int.from_bytes(data[2:4], "big")
        start = 4
    while len(data) < start + length:
        data += sock.recv(4096)
    return data[start:start + length]


def main():
    command, port, ca = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    if command == "cert":
        with connect(port, ca) as sock:
            print(sock.getpeercert(binary_form=True).hex())
    elif command == "wss":
        token = sys.argv[4]
        with connect(port, ca) as sock:
            key = base64.b64encode(os.urandom(16)).decode()
            sock.sendall((f"GET /v1/listen HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                          f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                          f"Authorization: Bearer {token}\r\n\r\n").encode())
            head = read_until(sock, b"\r\n\r\n")
            status = head.split(b"\r\n", 1)[0].decode()
            if " 101 " not in status + " ":
                print(status)
                return 1
            rest = head.split(b"\r\n\r\n", 1)[1]
            payload = b'{"type": "ping"}'
            mask = os.urandom(4)
            masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            sock.sendall(bytes([0x81, 0x80 | len(payload)]) + mask + masked)
            print(read_frame(sock, rest).decode())
    elif command == "version":
        versions = {"1.0": ssl.TLSVersion.TLSv1, "1.1": ssl.TLSVersion.TLSv1_1,
                    "1.2": ssl.TLSVersion.TLSv1_2, "1.3": ssl.TLSVersion.TLSv1_3}
        try:
            with connect(port, ca, versions[sys.argv[4]]):
                print("ok")
        except (ssl.SSLError, ConnectionResetError) as error:
            print("refused", error)
    else:
        print("unknown command", command)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
