"""What maintaining the field index in larger, sorted batches would save (an experiment, not a feature).

Hearth writes a document's index rows in the commit that writes the document: about five rows per create of
the benchmark's document (its four fields and `__name__`), each at a random place in the index, so each dirties
a page of its own, which the WAL then takes whole. This script builds a table shaped like Hearth's
`field_index` (same columns, same primary key, WITHOUT ROWID; the same five rows per document, with keys of
the same sizes) over BASE documents, then adds 16,000 documents' rows in commits of 8 documents (what group
commit gives Hearth under 16 connections), and in sorted commits of 1,000 and 8,000 documents (what deferring
index maintenance by a fraction of a second to a second would give). It prints WAL frames and CPU per
document. The CPU includes Python's own per-row work, the same in every run.

    python3 bench/index_batching.py [BASE]      # BASE documents already indexed, default 100,000
"""
import sqlite3, os, random, time, sys
def row(rng, i):
    doc = rng.randbytes(20)
    return [("gbench", "__name__", b"", doc), ("gbench", "title", rng.randbytes(24), doc),
            ("gbench", "count", rng.randbytes(9), doc), ("gbench", "flag", bytes([rng.randrange(2)]), doc),
            ("gbench", "body", rng.randbytes(202), doc)]
def setup(path, n, rng):
    for ext in ("", "-wal", "-shm"):
        try: os.remove(path + ext)
        except FileNotFoundError: pass
    c = sqlite3.connect(path, isolation_level=None)
    c.execute("PRAGMA journal_mode=WAL"); c.execute("PRAGMA synchronous=NORMAL"); c.execute("PRAGMA cache_size=-8192")
    c.execute("CREATE TABLE field_index (scope TEXT NOT NULL, field TEXT NOT NULL, key BLOB NOT NULL, doc BLOB NOT NULL, PRIMARY KEY (scope, field, key, doc)) WITHOUT ROWID")
    rows = [r for i in range(n) for r in row(rng, i)]
    rows.sort()
    c.execute("BEGIN"); c.executemany("INSERT INTO field_index VALUES (?,?,?,?)", rows); c.execute("COMMIT")
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    c.execute("PRAGMA wal_autocheckpoint=0")
    return c
def run(path, base, docs, per_commit, sort):
    rng = random.Random(7)
    c = setup(path, base, rng)
    pages0 = c.execute("PRAGMA page_count").fetchone()[0]
    batches = [[r for i in range(per_commit) for r in row(rng, i)] for _ in range(docs // per_commit)]
    t0 = time.process_time(); w0 = time.time()
    for b in batches:
        if sort: b.sort()
        c.execute("BEGIN"); c.executemany("INSERT INTO field_index VALUES (?,?,?,?)", b); c.execute("COMMIT")
    t1 = time.process_time()
    wal = os.path.getsize(path + "-wal")
    frames = (wal - 32) / (4096 + 24)
    print(f"base {base} docs, {docs} new docs in commits of {per_commit} ({'sorted' if sort else 'as they come'}): "
          f"{frames/docs:.2f} WAL frames per doc, {(t1-t0)/docs*1e6:.1f} us CPU per doc (index pages {pages0})", flush=True)
    c.close()
p = os.path.join(os.environ.get("TMPDIR", "/tmp"), "hearth-index-batching.db")
base = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
for per, sort in [(8, False), (8, True), (1000, True), (8000, True)]:
    run(p, base, 16_000, per, sort)
for ext in ("", "-wal", "-shm"):
    try: os.remove(p + ext)
    except FileNotFoundError: pass
