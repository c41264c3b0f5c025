"""Uploads a file to a tus server with tuspy (the tus project's Python client), for Hearth's end-to-end tests.

Starts a new upload, or goes on with one (--url), up to --stop-at bytes or the end; writes one JSON line to
--out: {"url", "offset", "sha256" (of the whole file)} when it stopped as asked, or {"error", "status"} when the server refused.
"""
import argparse
import hashlib
import json
import sys

from tusclient import client as tus_client
from tusclient.exceptions import TusCommunicationError


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--endpoint", required=True, help="the server's creation URL, e.g. http://127.0.0.1:8080/v1/uploads")
    parser.add_argument("--file", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--path", help="the object's path (Upload-Metadata 'path')")
    parser.add_argument("--content-type")
    parser.add_argument("--meta", action="append", default=[], help="key=value custom metadata")
    parser.add_argument("--token", help="bearer token sent as Authorization")
    parser.add_argument("--chunk-size", type=int, default=64 * 1024)
    parser.add_argument("--stop-at", type=int, help="stop once this many bytes are in")
    parser.add_argument("--url", help="the upload's URL, to go on with it")
    parser.add_argument("--checksum", action="store_true", help="send Upload-Checksum (sha1) with every chunk")
    args = parser.parse_args()

    headers = {"Authorization": "Bearer " + args.token} if args.token else {}
    client = tus_client.TusClient(args.endpoint, headers=headers)
    metadata = {}
    if args.path is not None:
        metadata["path"] = args.path
    if args.content_type is not None:
        metadata["contentType"] = args.content_type
    for item in args.meta:
        key, _, value = item.partition("=")
        metadata[key] = value
    try:
        uploader = client.uploader(file_path=args.file, url=args.url, chunk_size=args.chunk_size, metadata=metadata,
                                   upload_checksum=args.checksum)
        uploader.upload(stop_at=args.stop_at)
        with open(args.file, "rb") as source:
            digest = hashlib.sha256(source.read()).hexdigest()
        result = {"url": uploader.url, "offset": uploader.offset, "sha256": digest}
    except TusCommunicationError as error:
        body = error.response_content.decode("utf-8", "replace") if error.response_content else ""
        result = {"error": str(error) + " " + body, "status": error.status_code}
    with open(args.out, "w") as out:
        out.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
