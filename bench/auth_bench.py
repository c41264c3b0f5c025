#!/usr/bin/env python3
"""Password-login benchmark: Hearth (Argon2id) and PocketBase (bcrypt) side by side, in one run, on loopback.

Workload: 50 concurrent password logins (wrk, `lua/login.lua`) against accounts preloaded on each server,
with document reads running beside them (a second wrk, 4 connections, GET by id, `lua/docs.lua`), whose
latency must stay low while the logins saturate the hashing. Reads are also measured alone first, for
reference. Each server runs with its default password hashing: Hearth Argon2id m=19456 KiB, t=2, p=1
(OWASP's minimum); PocketBase bcrypt cost 10. Both servers and all traffic stay on 127.0.0.1; every run is
bounded in time and stops by itself.

    python3 bench/auth_bench.py [--duration 10] [--rounds 1] [--users 100]
"""
import argparse, json, os, shutil, signal, statistics, subprocess, sys, tempfile, time, urllib.request
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from docs_bench import built, doc_body, http, stop, wait_up  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOGIN_LUA = os.path.join(ROOT, "bench", "lua", "login.lua")
DOCS_LUA = os.path.join(ROOT, "bench", "lua", "docs.lua")
ADMIN_KEY = "hak_bench_" + os.urandom(16).hex()  # fresh per run, so no other server accepts it
PASSWORD = "bench-password-1234"
N_DOCS = 1_000
LOGIN_CONNECTIONS = 50
READ_CONNECTIONS = 4


def start_hearth(tmp, port, users, procs):
    binary = built()
    env = dict(os.environ, HEARTH_ADMIN_KEY=ADMIN_KEY)
    proc = subprocess.Popen([binary, "serve", "--data", os.path.join(tmp, "hearth"), "--port", str(port),
                             "--log-level", "warning"], env=env, stdout=subprocess.DEVNULL)
    procs.append(proc)  # stopped by main's cleanup even if the set-up below fails
    base = f"http://127.0.0.1:{port}"
    wait_up(f"{base}/healthz")
    auth = {"Authorization": f"Bearer {ADMIN_KEY}"}
    for start in range(0, N_DOCS, 500):  # a commit holds at most 500 writes
        writes = [{"set": f"bench/b{i:014d}", "data": doc_body(i)} for i in range(start + 1, min(N_DOCS, start + 500) + 1)]
        http("POST", f"{base}/v1/commit", {"writes": writes}, auth)

    def create(i):
        http("POST", f"{base}/v1/admin/users", {"email": f"user{i}@bench.example", "password": PASSWORD}, auth)
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(create, range(1, users + 1)))
    hashing = "Argon2id m=19456 KiB, t=2, p=1 (default)"
    return base, hashing, {
        "login": dict(BENCH_PATH="/v1/auth/login", BENCH_IDENTITY="email", BENCH_USERS=str(users), BENCH_PASSWORD=PASSWORD),
        "get": dict(BENCH_MODE="get", BENCH_PATH="/v1/docs/bench/b", BENCH_AUTH=f"Bearer {ADMIN_KEY}", BENCH_N=str(N_DOCS)),
    }


def start_pocketbase(tmp, port, users, procs):
    pb_dir = os.path.join(tmp, "pb")
    subprocess.run(["pocketbase", "superuser", "upsert", "bench@example.com", "bench-password-123", "--dir", pb_dir],
                   check=True, stdout=subprocess.DEVNULL)
    proc = subprocess.Popen(["pocketbase", "serve", "--dir", pb_dir, "--http", f"127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    procs.append(proc)
    base = f"http://127.0.0.1:{port}"
    wait_up(f"{base}/api/health")
    token = http("POST", f"{base}/api/collections/_superusers/auth-with-password",
                 {"identity": "bench@example.com", "password": "bench-password-123"})["token"]
    su = {"Authorization": token}
    http("POST", f"{base}/api/collections", {
        "name": "bench", "type": "base", "listRule": "", "viewRule": "", "createRule": "", "updateRule": "", "deleteRule": "",
        "fields": [{"name": "title", "type": "text"}, {"name": "count", "type": "number"},
                   {"name": "published", "type": "bool"}, {"name": "body", "type": "text"}]}, su)

    def create_doc(i):
        http("POST", f"{base}/api/collections/bench/records", {"id": f"b{i:014d}", **doc_body(i)})

    def create_user(i):
        http("POST", f"{base}/api/collections/users/records",
             {"email": f"user{i}@bench.example", "password": PASSWORD, "passwordConfirm": PASSWORD}, su)
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(create_doc, range(1, N_DOCS + 1)))
        list(pool.map(create_user, range(1, users + 1)))
    # The stored hash names its cost: "$2a$10$..." is bcrypt cost 10.
    cost = "?"
    db = os.path.join(pb_dir, "data.db")
    try:
        import sqlite3
        row = sqlite3.connect(f"file:{db}?mode=ro", uri=True).execute("SELECT password FROM users LIMIT 1").fetchone()
        cost = row[0].split("$")[2]
    except Exception as e:  # the figure is still valid; only the label is missing
        print(f"(could not read PocketBase's hash cost: {e})")
    hashing = f"bcrypt cost {cost} (default)"
    return base, hashing, {
        "login": dict(BENCH_PATH="/api/collections/users/auth-with-password", BENCH_IDENTITY="identity",
                      BENCH_USERS=str(users), BENCH_PASSWORD=PASSWORD),
        "get": dict(BENCH_MODE="get", BENCH_PATH="/api/collections/bench/records/b", BENCH_N=str(N_DOCS)),
    }


def wrk_start(base, lua, env, duration, connections):
    return subprocess.Popen(["wrk", "-t2", f"-c{connections}", f"-d{duration}s", "--timeout", "30s", "-s", lua, base],
                            env=dict(os.environ, **env), stdout=subprocess.PIPE, text=True)


def wrk_result(proc, duration):
    out, _ = proc.communicate(timeout=duration + 90)
    line = next(l for l in out.splitlines() if l.startswith("RESULT"))
    return {k: float(v) for k, v in (kv.split("=") for kv in line.split()[1:])}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--users", type=int, default=100)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="hearth-auth-bench-")
    procs = []
    try:
        h_base, h_hash, h_env = start_hearth(tmp, 18081, args.users, procs)
        p_base, p_hash, p_env = start_pocketbase(tmp, 18091, args.users, procs)
        print(f"{LOGIN_CONNECTIONS} concurrent logins beside {READ_CONNECTIONS} connections of reads; {args.duration} s per run, "
              f"{args.rounds} rounds, {args.users} accounts, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}",
              flush=True)
        servers = [("hearth", h_base, h_env, h_hash), ("pocketbase", p_base, p_env, p_hash)]
        results = {}
        for _ in range(args.rounds):
            for name, base, env, _ in servers:
                alone = wrk_result(wrk_start(base, DOCS_LUA, env["get"], args.duration, READ_CONNECTIONS), args.duration)
                results.setdefault((name, "reads alone"), []).append(alone)
                logins = wrk_start(base, LOGIN_LUA, env["login"], args.duration, LOGIN_CONNECTIONS)
                reads = wrk_start(base, DOCS_LUA, env["get"], args.duration, READ_CONNECTIONS)
                login, beside = wrk_result(logins, args.duration), wrk_result(reads, args.duration)
                results.setdefault((name, "logins"), []).append(login)
                results.setdefault((name, "reads beside logins"), []).append(beside)
                for kind, r in [("reads alone", alone), ("logins", login), ("reads beside logins", beside)]:
                    print(f"{name:10} {kind:20} {r['rps']:8.1f} req/s  p50 {r['p50_ms']:8.2f} ms  p99 {r['p99_ms']:8.2f} ms  "
                          f"non-2xx {int(r['non2xx'])}", flush=True)
        print()
        print("| server | password hashing | logins/s | login p50 ms | login p99 ms | reads alone p99 ms | reads beside logins: req/s, p50 ms, p99 ms |")
        print("|---|---|---|---|---|---|---|")
        for name, _, _, hashing in servers:
            med = lambda kind, key: statistics.median(r[key] for r in results[(name, kind)])
            print(f"| {name} | {hashing} | {med('logins', 'rps'):.1f} | {med('logins', 'p50_ms'):.0f} | "
                  f"{med('logins', 'p99_ms'):.0f} | {med('reads alone', 'p99_ms'):.2f} | "
                  f"{med('reads beside logins', 'rps'):.0f}, {med('reads beside logins', 'p50_ms'):.2f}, "
                  f"{med('reads beside logins', 'p99_ms'):.2f} |")
    finally:
        stop(procs)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
