#!/usr/bin/env python3
"""What a put's syncs cost on this filesystem, without the server: the orders a blob can be made durable in.

- old:  write the temporary file, fsync it, rename it into place, fsync the folder (two journal commits in turn)
- seq:  write, rename into place, fsync the file, then the folder (Hearth's order)
- conc: write, rename, fsync the file and the folder at once on two threads
- range: write, sync_file_range (the data written and waited for, no journal commit), rename, fsync the folder
         (one commit that holds the file's blocks and its name), then fsync the file (its commit done: a flush)
- group: write, rename, then one `syncfs` of the whole filesystem for all the puts waiting at that moment (a
         group commit: a put that arrives while one runs waits for the next, which one of the waiters starts)

Each order runs alone for a latency (one thread, medians and p90 of --count puts) and with --threads at once for
puts/s (--seconds each), alternating, --rounds times; with the puts at once, the device's writes and cache
flushes per put (from /sys/dev/block, all of the device's traffic while they ran). Files of --size bytes, in a
temporary folder under --dir (the filesystem of the data folder), removed at the end.
"""
import argparse, ctypes, os, shutil, statistics, tempfile, threading, time
from concurrent.futures import ThreadPoolExecutor

LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.sync_file_range.argtypes = (ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint)
WRITE_AND_WAIT = 1 | 2 | 4  # SYNC_FILE_RANGE_WAIT_BEFORE | _WRITE | _WAIT_AFTER

ORDERS = ("old", "seq", "conc", "range", "group")


def fsync_path(path, flags=0):
    fd = os.open(path, os.O_RDONLY | flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class GroupSync:
    """One `syncfs` at a time; a caller waits for one that starts after it asked (and starts it if none runs)."""

    def __init__(self, path):
        self.fd = os.open(path, os.O_RDONLY)
        self.cond = threading.Condition()
        self.started = self.completed = 0
        self.running = False

    def sync(self):
        with self.cond:
            target = self.started + 1
            while self.completed < target:
                if self.running:
                    self.cond.wait()
                    continue
                self.running = True
                self.started += 1
                mine = self.started
                self.cond.release()
                try:
                    if LIBC.syncfs(self.fd) != 0:
                        raise OSError(ctypes.get_errno(), "syncfs")
                finally:
                    self.cond.acquire()
                    self.completed, self.running = mine, False
                    self.cond.notify_all()


def device_counts(path):
    """The device's completed writes and flushes so far (fields 5 and 16 of its stat), or None."""
    dev = os.stat(path).st_dev
    try:
        fields = open(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}/stat").read().split()
        return int(fields[4]), int(fields[15])
    except (OSError, IndexError):
        return None


def put(order, root, name, data, pool, group=None):
    tmp, folder = f"{root}/{order}/tmp/{name}", f"{root}/{order}/blobs"
    dst = f"{folder}/{name}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, data)
    if order == "old":
        os.fsync(fd)
        os.close(fd)
        os.rename(tmp, dst)
        fsync_path(folder, os.O_DIRECTORY)
    elif order == "seq":
        os.close(fd)
        os.rename(tmp, dst)
        fsync_path(dst)
        fsync_path(folder, os.O_DIRECTORY)
    elif order == "range":
        if LIBC.sync_file_range(fd, 0, 0, WRITE_AND_WAIT) != 0:
            raise OSError(ctypes.get_errno(), "sync_file_range")
        os.rename(tmp, dst)
        fsync_path(folder, os.O_DIRECTORY)
        os.fsync(fd)
        os.close(fd)
    elif order == "group":
        os.close(fd)
        os.rename(tmp, dst)
        group.sync()
    else:
        os.close(fd)
        os.rename(tmp, dst)
        folder_sync = pool.submit(fsync_path, folder, os.O_DIRECTORY)
        fsync_path(dst)
        folder_sync.result()
    os.unlink(dst)


def latency(order, root, data, count, pool, group):
    times = []
    for i in range(count):
        start = time.perf_counter()
        put(order, root, f"l{i}", data, pool, group)
        times.append(time.perf_counter() - start)
    times.sort()
    return statistics.median(times) * 1000, times[int(len(times) * 0.9)] * 1000


def throughput(order, root, data, threads, seconds, pool, group):
    done, lock, stop = [0], threading.Lock(), time.time() + seconds

    def worker(t):
        i = 0
        while time.time() < stop:
            put(order, root, f"t{t}-{i}", data, pool, group)
            i += 1
            with lock:
                done[0] += 1

    workers = [threading.Thread(target=worker, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return done[0] / seconds, done[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", default=tempfile.gettempdir())
    ap.add_argument("--size", type=int, default=100 * 1024)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--seconds", type=float, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    root = tempfile.mkdtemp(prefix="hearth-sync-order-", dir=args.dir)
    pool = ThreadPoolExecutor(args.threads)
    data = os.urandom(args.size)
    try:
        for order in ORDERS:
            for sub in ("tmp", "blobs"):
                os.makedirs(f"{root}/{order}/{sub}")
        group = GroupSync(root)
        for r in range(args.rounds):
            for order in ORDERS:
                p50, p90 = latency(order, root, data, args.count, pool, group)
                before = device_counts(root)
                rate, puts = throughput(order, root, data, args.threads, args.seconds, pool, group)
                after = device_counts(root)
                io = (f", {(after[0] - before[0]) / puts:.1f} writes and {(after[1] - before[1]) / puts:.2f} flushes a put"
                      if before and after and puts else "")
                print(f"round {r + 1}  {order:5}  one at a time: median {p50:6.2f} ms, p90 {p90:6.2f} ms;  "
                      f"{args.threads} at once: {rate:7.0f} puts/s{io}  (load average {os.getloadavg()[0]:.1f})", flush=True)
    finally:
        pool.shutdown()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
