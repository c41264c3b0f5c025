#!/usr/bin/env python3
"""Files: Hearth's object downloads and uploads side by side with other servers, in one run, on loopback.

Sections (all of them by default, or those named):

  download   a 10 MiB object, `GET /v1/files/...` with the admin key, against nginx serving the same file from
             disk (a generated config in a temporary folder, its own loopback port, stopped at the end);
             wrk, --download-connections connections. Target: Hearth at least 0.5 of nginx's throughput.
  images     100 KiB JPEGs with 16 connections against PocketBase (a base collection with a file field):
             uploads (Hearth `PUT /v1/files/up/<name>.jpg`; PocketBase a multipart `POST` of a record), every
             one with bytes of its own; and downloads of 200 preloaded images at random (PocketBase's file URL,
             public). Target: Hearth at least 2x PocketBase for both.
  thumb      `?thumb=200x200` of a 1600x1200 JPEG once it is kept, against a plain download of an object of the
             thumbnail's bytes (16 connections). Expected: a ratio near 1.
  large      a 1 GiB object put and read back through Hearth (one connection each, streamed by Python), the
             server's RSS sampled every 50 ms: the growth over its RSS after a warm-up must stay under 64 MiB.

Every comparison runs ROUNDS times per server, alternating, and prints the medians and their ratio. With
--baseline, an older hearth binary runs beside the new one in every section (its own server, the same load, in
the same rounds), so a change is measured against the build before it in one run. Every server and all traffic
stay on 127.0.0.1; every run is bounded in time and everything stops by itself.

    python3 bench/files_bench.py [download] [images] [thumb] [large] [--rounds 2] [--duration 8]
                                 [--config release|debug] [--binary PATH] [--baseline PATH] [--large-mib 1024]
"""
import argparse, hashlib, http.client, json, os, shutil, statistics, subprocess, sys, tempfile, threading, time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from docs_bench import ADMIN_KEY, built, free_port, launch_pocketbase, settle, stop, wait_up  # noqa: E402
from memory_bench import rss_mib  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FILES_LUA = os.path.join(ROOT, "bench", "lua", "files.lua")
GET_LUA = os.path.join(ROOT, "bench", "lua", "get.lua")
AUTH = {"Authorization": f"Bearer {ADMIN_KEY}"}
AUTH_ENV = {"BENCH_AUTH": AUTH["Authorization"]}  # the same, for wrk's scripts
MIB = 1 << 20


def request(method, url, body=None, headers=None, timeout=120):
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.read(), dict(r.headers)


def wrk(url, env, duration, connections, script=FILES_LUA, threads=2):
    out = subprocess.run(["wrk", f"-t{threads}", f"-c{connections}", f"-d{duration}s", "--timeout", "30s", "-s", script, url],
                         env=dict(os.environ, **env), capture_output=True, text=True, timeout=duration + 60)
    line = next((l for l in out.stdout.splitlines() if l.startswith("RESULT")), None)
    if line is None:
        raise SystemExit(f"wrk gave no result for {url}: {out.stdout} {out.stderr}")
    return {k: float(v) for k, v in (kv.split("=") for kv in line.split()[1:])}


def start_hearth(binary, tmp, name="hearth", extra=()):
    port = free_port()
    proc = subprocess.Popen([binary, "serve", "--data", os.path.join(tmp, name), "--port", str(port),
                             "--log-level", "warning", *extra],
                            env=dict(os.environ, HEARTH_ADMIN_KEY=ADMIN_KEY), stdout=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    wait_up(f"{base}/healthz")
    return proc, base


def start_nginx(tmp, root):
    """nginx in the foreground as a child of this script, with a config of its own in `tmp`: every worker the
    machine's cores allow, sendfile, no access log, keep-alive without a request limit."""
    port = free_port()
    conf = os.path.join(tmp, "nginx.conf")
    temp = os.path.join(tmp, "nginx-temp")
    os.makedirs(temp, exist_ok=True)
    user = "user root;" if os.geteuid() == 0 else ""  # the files are in a folder only their owner reads
    with open(conf, "w") as f:
        f.write(f"""
{user}
daemon off;
worker_processes auto;
pid {tmp}/nginx.pid;
error_log {tmp}/nginx-error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 100000000;
    keepalive_timeout 120s;
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    fastcgi_temp_path {temp}/fastcgi;
    uwsgi_temp_path {temp}/uwsgi;
    scgi_temp_path {temp}/scgi;
    default_type application/octet-stream;
    server {{
        listen 127.0.0.1:{port};
        root {root};
        location / {{ }}
    }}
}}
""")
    proc = subprocess.Popen(["nginx", "-c", conf, "-p", tmp], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    end = time.time() + 30
    while time.time() < end:
        try:
            urllib.request.urlopen(f"{base}/nothing-here", timeout=1)
        except urllib.error.HTTPError:
            return proc, base
        except Exception:
            time.sleep(0.1)
    raise SystemExit(f"nginx did not come up: {open(os.path.join(tmp, 'nginx-error.log')).read()}")


def compare(title, runs, rounds):
    """Runs each (name, callable) ROUNDS times, alternating, and answers {name: [result, ...]}. Each round starts
    one place further along the list, so that no server always runs first (or right after the same one), and
    every run starts settled (`settle`: nothing left to write back from the setup or the run before)."""
    results = {name: [] for name, _ in runs}
    for round in range(rounds):
        shift = round % len(runs)
        for name, run in runs[shift:] + runs[:shift]:
            settle()
            r = run()
            results[name].append(r)
            print(f"  {title:9} {name:24} {r['rps']:9.1f} req/s  p50 {r['p50_ms']:8.2f} ms  p99 {r['p99_ms']:8.2f} ms  "
                  f"errors {int(r['non2xx'])}", flush=True)
    return results


def median(results, key="rps"):
    return statistics.median(r[key] for r in results)


def section_download(args, binary, tmp, summary):
    size = 10 * MIB
    www = os.path.join(tmp, "www")
    os.makedirs(www)
    data = os.urandom(size)
    with open(os.path.join(www, "big.bin"), "wb") as f:
        f.write(data)
    procs = []
    try:
        hearths = []
        for name, server in binaries(args, binary):
            proc, base = start_hearth(server, tmp, f"{name}-download"); procs.append(proc)
            request("PUT", f"{base}/v1/files/big.bin", data, {**AUTH, "Content-Type": "application/octet-stream"})
            got, _ = request("GET", f"{base}/v1/files/big.bin", headers=AUTH)
            assert got == data, f"{name} answered other bytes"
            hearths.append((name, base))
        n_proc, n_base = start_nginx(tmp, www); procs.append(n_proc)
        got, _ = request("GET", f"{n_base}/big.bin")
        assert got == data, "nginx answered other bytes"
        c = args.download_connections
        results = compare("download", [
            *[(name, lambda base=base: wrk(f"{base}/v1/files/big.bin", AUTH_ENV, args.duration, c, GET_LUA))
              for name, base in hearths],
            ("nginx", lambda: wrk(f"{n_base}/big.bin", {}, args.duration, c, GET_LUA)),
        ], args.rounds)
        n = median(results["nginx"])
        for name, _ in hearths:
            h = median(results[name])
            summary.append(f"| {label(name)}download 10 MiB, {c} connections | {h * size / MIB:,.0f} MiB/s ({h:.1f} req/s) "
                           f"| nginx {n * size / MIB:,.0f} MiB/s | **{h / n:.2f}x** (target 0.5) | errors "
                           f"{int(sum(r['non2xx'] for r in results[name] + results['nginx']))} |")
    finally:
        stop(procs)


def jpeg_of_about(tmp, target):
    """A JPEG of noise, as close to `target` bytes as a square of noise gets."""
    path = os.path.join(tmp, "image.jpg")
    side = 200
    while True:
        subprocess.run(["vips", "gaussnoise", path, str(side), str(side)], check=True)
        if os.path.getsize(path) >= target or side > 4000:
            return path
        side += 10


def multipart(image, unique):
    boundary = "hearthbenchboundary7MA4YWxkTrZu0gW"
    body = (f'--{boundary}\r\nContent-Disposition: form-data; name="photo"; filename="photo.jpg"\r\n'
            f"Content-Type: image/jpeg\r\n\r\n").encode() + image + unique + f"\r\n--{boundary}--\r\n".encode()
    return body, f"multipart/form-data; boundary={boundary}"


def start_pocketbase_images(tmp):
    """PocketBase with a public collection `images` of one file field: its process and its address."""
    proc, base, _ = launch_pocketbase(tmp, free_port(), {"name": "images", "fields": [
        {"name": "photo", "type": "file", "maxSelect": 1, "maxSize": 10 * MIB}]})
    return proc, base


def hearth_puts(image):
    """wrk's settings for Hearth's uploads of the file `image`, each a PUT of bytes of its own."""
    return dict(AUTH_ENV, BENCH_MODE="put", BENCH_PATH="/v1/files/up/", BENCH_BODY=image)


def pocketbase_posts(image):
    """wrk's settings for PocketBase's uploads of the file `image`, each a record's multipart POST."""
    return dict(BENCH_MODE="multipart", BENCH_PATH="/api/collections/images/records", BENCH_BODY=image)


def section_images(args, binary, tmp, summary):
    path = jpeg_of_about(tmp, 100 * 1024)
    image = open(path, "rb").read()
    print(f"  image: {len(image):,} bytes", flush=True)
    procs = []
    try:
        hearths = []
        for name, server in binaries(args, binary):
            proc, base = start_hearth(server, tmp, f"{name}-images"); procs.append(proc)
            hearths.append((name, base, os.path.join(tmp, f"{name}-paths")))
        p_proc, p_base = start_pocketbase_images(tmp)
        procs.append(p_proc)
        # 200 images in each, each with bytes of its own, to download at random.
        p_paths = os.path.join(tmp, "pocketbase-paths")

        def put_hearth(base, i):
            request("PUT", f"{base}/v1/files/img/{i:04d}.jpg", image + b"%016d" % i, {**AUTH, "Content-Type": "image/jpeg"})
            return f"/v1/files/img/{i:04d}.jpg"

        def post_pocketbase(i):
            body, content_type = multipart(image, b"%016d" % i)
            record = json.loads(request("POST", f"{p_base}/api/collections/images/records", body,
                                        {"Content-Type": content_type})[0])
            return f"/api/files/images/{record['id']}/{record['photo']}"

        with ThreadPoolExecutor(8) as pool:
            lists = [(paths, list(pool.map(lambda i, base=base: put_hearth(base, i), range(200))))
                     for _, base, paths in hearths]
            pocketbase_files = list(pool.map(post_pocketbase, range(200)))
        for file, paths in lists + [(p_paths, pocketbase_files)]:
            with open(file, "w") as f:
                f.write("\n".join(paths) + "\n")
        for name, base, _ in hearths:
            got, _ = request("GET", base + lists[0][1][7], headers=AUTH)
            assert got == image + b"%016d" % 7, f"{name} answered other bytes"
        got, _ = request("GET", p_base + pocketbase_files[7])
        assert got == image + b"%016d" % 7, "PocketBase answered other bytes"

        c = args.connections
        uploads = compare("upload", [
            *[(name, lambda base=base: wrk(base, hearth_puts(path), args.duration, c)) for name, base, _ in hearths],
            ("pocketbase", lambda: wrk(p_base, pocketbase_posts(path), args.duration, c)),
        ], args.rounds)
        downloads = compare("download", [
            *[(name, lambda base=base, paths=paths: wrk(base, dict(AUTH_ENV, BENCH_MODE="get", BENCH_PATHS=paths),
                                                        args.duration, c))
              for name, base, paths in hearths],
            ("pocketbase", lambda: wrk(p_base, dict(BENCH_MODE="get", BENCH_PATHS=p_paths), args.duration, c)),
        ], args.rounds)
        for what, results in [("upload", uploads), ("download", downloads)]:
            p = median(results["pocketbase"])
            for name, _, _ in hearths:
                h = median(results[name])
                summary.append(f"| {label(name)}{what} {len(image) // 1024} KiB images, {c} connections | {h:,.0f} req/s, p99 "
                               f"{median(results[name], 'p99_ms'):.1f} ms | PocketBase {p:,.0f} req/s, p99 "
                               f"{median(results['pocketbase'], 'p99_ms'):.1f} ms | **{h / p:.2f}x** (target 2) | errors "
                               f"{int(sum(r['non2xx'] for r in results[name] + results['pocketbase']))} |")
    finally:
        stop(procs)


def section_thumb(args, binary, tmp, summary):
    photo = os.path.join(tmp, "photo.jpg")
    subprocess.run(["vips", "gaussnoise", photo, "1600", "1200"], check=True)
    procs = []
    try:
        proc, base = start_hearth(binary, tmp, "hearth-thumb"); procs.append(proc)
        request("PUT", f"{base}/v1/files/photo.jpg", open(photo, "rb").read(), {**AUTH, "Content-Type": "image/jpeg"})
        start = time.time()
        thumb, headers = request("GET", f"{base}/v1/files/photo.jpg?thumb=200x200", headers=AUTH)
        made_ms = (time.time() - start) * 1000
        request("PUT", f"{base}/v1/files/copy.jpg", thumb, {**AUTH, "Content-Type": headers["Content-Type"]})
        print(f"  thumbnail {len(thumb):,} bytes, made by the first request in {made_ms:.0f} ms", flush=True)
        c = args.connections
        results = compare("thumb", [
            ("thumbnail (kept)", lambda: wrk(f"{base}/v1/files/photo.jpg?thumb=200x200", AUTH_ENV, args.duration, c, GET_LUA)),
            ("plain download", lambda: wrk(f"{base}/v1/files/copy.jpg", AUTH_ENV, args.duration, c, GET_LUA)),
        ], args.rounds)
        t, d = median(results["thumbnail (kept)"]), median(results["plain download"])
        summary.append(f"| thumbnail 200x200 (kept) of a 1600x1200 JPEG, {c} connections | {t:,.0f} req/s | plain "
                       f"download of its {len(thumb):,} bytes {d:,.0f} req/s | **{t / d:.2f}x** (expected about 1); "
                       f"first request {made_ms:.0f} ms | errors "
                       f"{int(sum(r['non2xx'] for rs in results.values() for r in rs))} |")
    finally:
        stop(procs)


class RSSSampler(threading.Thread):
    """The server's largest RSS since `reset`, sampled every 50 ms."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.peak, self.running = pid, 0.0, True
        self.lock = threading.Lock()

    def run(self):
        while self.running:
            try:
                rss = rss_mib(self.pid)
            except (OSError, SystemExit):
                return
            with self.lock:
                self.peak = max(self.peak, rss)
            time.sleep(0.05)

    def take(self):
        with self.lock:
            peak, self.peak = self.peak, 0.0
            return peak


def section_large(args, binary, tmp, summary, prefix=""):
    size = args.large_mib * MIB
    procs = []
    try:
        folder = "hearth-large-baseline" if prefix else "hearth-large"
        proc, base = start_hearth(binary, tmp, folder, ["--max-file-size", str(size + MIB)]); procs.append(proc)
        port = int(base.rsplit(":", 1)[1])
        chunk = os.urandom(MIB)
        # Warm up: a put and a get of a few MiB before the baseline, as FileMemoryTests does.
        request("PUT", f"{base}/v1/files/warm", chunk * 4, AUTH)
        request("GET", f"{base}/v1/files/warm", headers=AUTH)
        time.sleep(0.5)
        baseline = rss_mib(proc.pid)
        sampler = RSSSampler(proc.pid)
        sampler.start()
        digest = hashlib.sha256()

        def chunks():
            for i in range(size // MIB):
                piece = i.to_bytes(8, "little") + chunk[8:]
                digest.update(piece)
                yield piece

        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        start = time.monotonic()
        conn.request("PUT", "/v1/files/large.bin", body=chunks(),
                     headers={**AUTH, "Content-Length": str(size), "Content-Type": "application/octet-stream"})
        answer = conn.getresponse()
        put = json.loads(answer.read())
        put_seconds = time.monotonic() - start
        if answer.status != 201 or put.get("sha256") != digest.hexdigest():
            raise SystemExit(f"the put answered {answer.status} {put}")
        put_peak = sampler.take()

        start = time.monotonic()
        conn.request("GET", "/v1/files/large.bin", headers=AUTH)
        answer = conn.getresponse()
        received, check = 0, hashlib.sha256()
        while True:
            piece = answer.read(MIB)
            if not piece:
                break
            received += len(piece)
            check.update(piece)
        get_seconds = time.monotonic() - start
        conn.close()
        get_peak = sampler.take()
        sampler.running = False
        if answer.status != 200 or received != size or check.hexdigest() != digest.hexdigest():
            raise SystemExit(f"the download answered {answer.status}, {received} bytes")
        growth = max(put_peak, get_peak) - baseline
        ok = growth < 64
        print(f"  large     {args.large_mib} MiB: put {size / MIB / put_seconds:,.0f} MiB/s (peak RSS {put_peak:.0f} MiB), "
              f"get {size / MIB / get_seconds:,.0f} MiB/s (peak {get_peak:.0f} MiB); baseline {baseline:.0f} MiB, "
              f"growth {growth:+.0f} MiB: {'within' if ok else 'NOT within'} 64 MiB", flush=True)
        summary.append(f"| {prefix}{args.large_mib} MiB put and get, one connection each | put {size / MIB / put_seconds:,.0f} MiB/s, get "
                       f"{size / MIB / get_seconds:,.0f} MiB/s | | RSS {baseline:.0f} MiB after warm-up, peak "
                       f"{max(put_peak, get_peak):.0f} MiB: growth **{growth:+.0f} MiB** (bound 64) | |")
        return ok
    finally:
        stop(procs)


def section_large_each(args, binary, tmp, summary):
    ok = True
    for name, server in binaries(args, binary):
        print(f"  {name}:", flush=True)
        ok = section_large(args, server, tmp, summary, label(name)) and ok
    return ok


def binaries(args, binary):
    """The hearth servers of a run: this build, and the baseline when one is given."""
    return [("hearth", binary)] + ([("hearth-baseline", os.path.abspath(args.baseline))] if args.baseline else [])


def label(name):
    return "baseline: " if name == "hearth-baseline" else ""


SECTIONS = {"download": section_download, "images": section_images, "thumb": section_thumb, "large": section_large_each}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sections", nargs="*", metavar="SECTION", help=" ".join(SECTIONS) + " (default: all)")
    ap.add_argument("--duration", type=int, default=8, help="seconds per wrk run")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--connections", type=int, default=16, help="images and thumb")
    ap.add_argument("--download-connections", type=int, default=8, help="the 10 MiB download")
    ap.add_argument("--large-mib", type=int, default=1024)
    ap.add_argument("--config", default="release", choices=["release", "debug"])
    ap.add_argument("--binary", help="a hearth binary to run instead of building one")
    ap.add_argument("--baseline", metavar="BINARY", help="an older hearth binary measured beside it in every section "
                    "but thumb")
    args = ap.parse_args()
    sections = args.sections or list(SECTIONS)
    unknown = [name for name in sections if name not in SECTIONS]
    if unknown:
        ap.error(f"unknown section {unknown[0]!r}: the sections are {', '.join(SECTIONS)}")
    binary = args.binary or built(config=args.config)
    print(f"{binary}{' against ' + args.baseline if args.baseline else ''}; {args.rounds} rounds of {args.duration} s; load average {os.getloadavg()[0]:.1f}", flush=True)
    summary, ok = [], True
    tmp = tempfile.mkdtemp(prefix="hearth-files-bench-")
    try:
        for name in sections:
            print(f"{name}:", flush=True)
            if SECTIONS[name](args, binary, tmp, summary) is False:
                ok = False
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}\n")
    print("| workload | Hearth | the other | ratio | |")
    print("|---|---|---|---|---|")
    print("\n".join(summary))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
