#!/usr/bin/env python3
"""Where an upload's time goes: the server's CPU per 100 KiB upload, and how busy the machine is meanwhile.

For each pair, each binary in turn (--binary, then --baseline if given): a fresh server on a new data folder,
2 s of warm-up and a `sync`, then `wrk -t2 -c16` of `lua/files.lua` puts (every upload bytes of its own) for --duration
seconds. Prints uploads/s, p50 and p99, the server's user+system CPU (from /proc) per upload and in cores,
the machine's busy share (from /proc/stat), and the server's context switches per upload (`perf stat`, when
perf is there). Every server and all traffic stay on 127.0.0.1; each server is stopped after its run.

The client's CPU per upload (wrk's user+system time, from its rusage) is printed too: on two cores the load
generator takes its share from whichever server it drives, so a server's ceiling is set by its own CPU per
upload plus the client's. With --pocketbase, each pair also runs PocketBase 0.40 the same way (a public
collection with a file field, each upload a multipart POST of the same image), so the two servers' CPU per
upload stand side by side.

With --together, each pair runs both binaries at the same time instead, each under its own `wrk -t1 -c8`:
both meet the same outside load (other builds and benchmarks on the machine), which then sways their CPU
per upload alike; the two share the machine's cores with each other, so their uploads/s are not a single
server's.

    python3 bench/upload_cpu.py --binary NEW [--baseline OLD] [--pocketbase] [--pairs 3] [--duration 6] [--together]
"""
import argparse, os, resource, shutil, subprocess, sys, tempfile, time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from docs_bench import ADMIN_KEY, free_port, settle, stop, wait_up  # noqa: E402
from files_bench import hearth_puts, jpeg_of_about, pocketbase_posts, start_pocketbase_images, wrk  # noqa: E402


def process_cpu(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_cpu():
    ticks = list(map(int, open("/proc/stat").readline().split()[1:]))
    return sum(ticks), ticks[3] + ticks[4]  # all, idle + iowait


def start(binary, tmp):
    """A server on a fresh data folder, once it answers: its process and its address."""
    port = free_port()
    proc = subprocess.Popen([binary, "serve", "--data", tempfile.mkdtemp(dir=tmp), "--port", str(port),
                             "--log-level", "warning"], env=dict(os.environ, HEARTH_ADMIN_KEY=ADMIN_KEY),
                            stdout=subprocess.DEVNULL)
    try:
        wait_up(f"http://127.0.0.1:{port}/healthz")
    except BaseException:
        stop([proc])
        raise
    return proc, f"http://127.0.0.1:{port}"


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(proc, base, env, tmp, duration):
    """Measures one started server under `wrk -t2 -c16` uploads (`env` says which), then stops it."""
    try:
        wrk(base, env, 2, 16)
        settle()
        counts = os.path.join(tmp, "perf-stat.txt")
        perf = shutil.which("perf") and subprocess.Popen(
            ["perf", "stat", "-x,", "-o", counts, "-e", "context-switches", "-p", str(proc.pid), "--", "sleep", str(duration)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client0, cpu0, (all0, idle0), t0 = children_cpu(), process_cpu(proc.pid), machine_cpu(), time.time()
        r = wrk(base, env, duration, 16)
        client1, cpu1, (all1, idle1), t1 = children_cpu(), process_cpu(proc.pid), machine_cpu(), time.time()
        uploads = r["rps"] * duration
        switches = ""
        if perf and perf.wait(timeout=duration + 30) == 0:
            line = next((l for l in open(counts) if "context-switches" in l), None)
            if line:
                switches = f", {int(line.split(',')[0]) / (r['rps'] * duration):.1f} context switches per upload"
        return (f"{r['rps']:7.0f} uploads/s  p50 {r['p50_ms']:6.2f} ms  p99 {r['p99_ms']:7.2f} ms  errors {int(r['non2xx'])}; "
                f"server {(cpu1 - cpu0) / (t1 - t0):.2f} cores, {(cpu1 - cpu0) / uploads * 1e6:,.0f} µs per upload, "
                f"client {(client1 - client0) / uploads * 1e6:,.0f} µs; "
                f"machine {1 - (idle1 - idle0) / (all1 - all0):.0%} busy{switches}")
    finally:
        stop([proc])


def run_together(binaries, tmp, image, duration):
    """Both binaries at once, each under its own wrk; one line per binary."""
    servers = []
    try:
        for _, binary in binaries:
            servers.append(start(binary, tmp))
        env = hearth_puts(image)
        with ThreadPoolExecutor(len(servers)) as pool:
            list(pool.map(lambda s: wrk(s[1], env, 2, 8, threads=1), servers))
            cpu0 = [process_cpu(p.pid) for p, _ in servers]
            results = list(pool.map(lambda s: wrk(s[1], env, duration, 8, threads=1), servers))
            cpu1 = [process_cpu(p.pid) for p, _ in servers]
        return [f"{r['rps']:7.0f} uploads/s  p50 {r['p50_ms']:6.2f} ms  p99 {r['p99_ms']:7.2f} ms  errors {int(r['non2xx'])}; "
                f"{(b - a) / (r['rps'] * duration) * 1e6:,.0f} µs per upload"
                for r, a, b in zip(results, cpu0, cpu1)]
    finally:
        stop([p for p, _ in servers])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", required=True)
    ap.add_argument("--baseline")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--duration", type=int, default=6)
    ap.add_argument("--together", action="store_true", help="run both binaries at the same time in each pair")
    ap.add_argument("--pocketbase", action="store_true", help="measure PocketBase too in each pair (not with --together)")
    args = ap.parse_args()
    if args.pocketbase and args.together:
        ap.error("--pocketbase runs each server alone: leave out --together")
    tmp = tempfile.mkdtemp(prefix="hearth-upload-cpu-")
    try:
        image = jpeg_of_about(tmp, 100 * 1024)
        binaries = [("new", args.binary)] + ([("baseline", args.baseline)] if args.baseline else [])
        for pair in range(args.pairs):
            if args.together:
                for (name, _), line in zip(binaries, run_together(binaries, tmp, image, args.duration)):
                    print(f"pair {pair + 1}  {name:8}  {line}  (load average {os.getloadavg()[0]:.1f})", flush=True)
                continue
            servers = [(name, lambda binary=binary: (*start(binary, tmp), hearth_puts(image))) for name, binary in binaries]
            if args.pocketbase:
                servers.append(("pocketbase", lambda: (*start_pocketbase_images(tempfile.mkdtemp(dir=tmp)), pocketbase_posts(image))))
            for name, launch in servers:
                print(f"pair {pair + 1}  {name:10}  {run(*launch(), tmp, args.duration)}  "
                      f"(load average {os.getloadavg()[0]:.1f})", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
