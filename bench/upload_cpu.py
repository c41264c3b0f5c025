#!/usr/bin/env python3
"""Where an upload's time goes: the server's CPU per 100 KiB upload, and how busy the machine is meanwhile.

For each pair, each binary in turn (--binary, then --baseline if given): a fresh server on a new data folder,
2 s of warm-up, then `wrk -t2 -c16` of `lua/files.lua` puts (every upload bytes of its own) for --duration
seconds. Prints uploads/s, p50 and p99, the server's user+system CPU (from /proc) per upload and in cores,
the machine's busy share (from /proc/stat), and the server's context switches per upload (`perf stat`, when
perf is there). Every server and all traffic stay on 127.0.0.1; each server is stopped after its run.

With --together, each pair runs both binaries at the same time instead, each under its own `wrk -t1 -c8`:
both meet the same outside load (other builds and benchmarks on the machine), which then sways their CPU
per upload alike; the two share the machine's cores with each other, so their uploads/s are not a single
server's.

    python3 bench/upload_cpu.py --binary NEW [--baseline OLD] [--pairs 3] [--duration 6] [--together]
"""
import argparse, os, shutil, subprocess, sys, tempfile, time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from docs_bench import ADMIN_KEY, free_port, stop, wait_up  # noqa: E402
from files_bench import AUTH, jpeg_of_about, wrk  # noqa: E402


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


def run(binary, tmp, image, duration):
    proc, base = start(binary, tmp)
    try:
        env = {"BENCH_AUTH": AUTH["Authorization"], "BENCH_MODE": "put", "BENCH_PATH": "/v1/files/up/", "BENCH_BODY": image}
        wrk(base, env, 2, 16)
        counts = os.path.join(tmp, "perf-stat.txt")
        perf = shutil.which("perf") and subprocess.Popen(
            ["perf", "stat", "-x,", "-o", counts, "-e", "context-switches", "-p", str(proc.pid), "--", "sleep", str(duration)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        cpu0, (all0, idle0), t0 = process_cpu(proc.pid), machine_cpu(), time.time()
        r = wrk(base, env, duration, 16)
        cpu1, (all1, idle1), t1 = process_cpu(proc.pid), machine_cpu(), time.time()
        uploads = r["rps"] * duration
        switches = ""
        if perf and perf.wait(timeout=duration + 30) == 0:
            line = next((l for l in open(counts) if "context-switches" in l), None)
            if line:
                switches = f", {int(line.split(',')[0]) / (r['rps'] * duration):.1f} context switches per upload"
        return (f"{r['rps']:7.0f} uploads/s  p50 {r['p50_ms']:6.2f} ms  p99 {r['p99_ms']:7.2f} ms  errors {int(r['non2xx'])}; "
                f"server {(cpu1 - cpu0) / (t1 - t0):.2f} cores, {(cpu1 - cpu0) / uploads * 1e6:,.0f} µs per upload; "
                f"machine {1 - (idle1 - idle0) / (all1 - all0):.0%} busy{switches}")
    finally:
        stop([proc])


def run_together(binaries, tmp, image, duration):
    """Both binaries at once, each under its own wrk; one line per binary."""
    servers = []
    try:
        for _, binary in binaries:
            servers.append(start(binary, tmp))
        env = {"BENCH_AUTH": AUTH["Authorization"], "BENCH_MODE": "put", "BENCH_PATH": "/v1/files/up/", "BENCH_BODY": image}
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
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="hearth-upload-cpu-")
    try:
        image = jpeg_of_about(tmp, 100 * 1024)
        binaries = [("new", args.binary)] + ([("baseline", args.baseline)] if args.baseline else [])
        for pair in range(args.pairs):
            if args.together:
                for (name, _), line in zip(binaries, run_together(binaries, tmp, image, args.duration)):
                    print(f"pair {pair + 1}  {name:8}  {line}  (load average {os.getloadavg()[0]:.1f})", flush=True)
                continue
            for name, binary in binaries:
                print(f"pair {pair + 1}  {name:8}  {run(binary, tmp, image, args.duration)}  "
                      f"(load average {os.getloadavg()[0]:.1f})", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
