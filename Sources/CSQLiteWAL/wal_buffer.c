// An SQLite VFS over the default one that gathers a connection's WAL appends in memory and writes them to
// the WAL file with one `pwrite` when the transaction's commit frame is complete.
//
// SQLite writes each WAL frame with two calls, its 24-byte header and then its page, at offsets that are not
// page aligned, so a commit of N frames costs the kernel 2N system calls and about 3N page-cache page
// operations. Gathered, it costs one call and about N + 1 page operations. What is on disk, and when, does
// not change:
//
// - A commit's frames are all written (or the write has failed and the commit with it) before SQLite
//   returns from writing its commit frame, so before it publishes the commit in the WAL index, where other
//   connections and processes learn of it, and before the commit can be synced or acknowledged. The commit
//   frame is recognised by its header (bytes 4-7: the database size after the commit, 0 on other frames).
// - Anything that reads, syncs, truncates or sizes the WAL through this connection writes the buffer first,
//   and so does a write that does not continue it. As a second guard, the connection's main database file
//   writes its WAL's buffer at every shared-memory barrier (SQLite takes one while publishing a commit) and
//   before it releases a shared-memory lock (the end of a write transaction).
//
// Frames written and then abandoned (a rolled-back transaction) may stay in the buffer until the next write
// replaces them; SQLite never reads frames past the last commit it published.

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "wal_buffer.h"

/// Largest amount gathered before it is written anyway.
#define BUFFER_CAPACITY (1 << 20)
/// Most bytes the default VFS writes in one call (it masks a length to 17 bits).
#define MAX_WRITE 0x1F000
/// SQLite's WAL frame header size.
#define FRAME_HEADER_SIZE 24

typedef struct BufferedFile BufferedFile;
struct BufferedFile {
    sqlite3_file base;
    /// The default VFS's file, allocated right after this struct.
    sqlite3_file *real;
    /// The name SQLite opened the file by: for a main database, the pointer its WAL's name leads back to.
    const char *name;
    int isWAL;
    /// A main database: its connection's WAL file while open. A WAL: its connection's main database file.
    BufferedFile *wal;
    BufferedFile *database;
    /// Open main database files, for WAL files to find theirs.
    BufferedFile *nextDatabase;
    /// Gathered WAL bytes: `length` bytes for the file from offset `start`.
    unsigned char *buffer;
    sqlite3_int64 start;
    int length;
    /// Set when a commit frame's header was gathered: its page completes the commit.
    int commitPending;
};

static sqlite3_vfs *underlying;
static pthread_mutex_t registryLock = PTHREAD_MUTEX_INITIALIZER;
static BufferedFile *openDatabases;
static atomic_llong flushCount;
static atomic_llong flushedBytes;

static int flushBuffer(BufferedFile *p) {
    if (p->length == 0) return SQLITE_OK;
    int length = p->length;
    p->length = 0;
    p->commitPending = 0;
    // The default VFS writes at most 128 KiB - 1 per call: write in pieces that end on 4 KiB boundaries.
    int done = 0;
    while (done < length) {
        sqlite3_int64 offset = p->start + done;
        sqlite3_int64 end = (offset + MAX_WRITE) & ~(sqlite3_int64)4095;
        int piece = (int)(end - offset);
        if (piece > length - done) piece = length - done;
        int rc = p->real->pMethods->xWrite(p->real, p->buffer + done, piece, offset);
        if (rc != SQLITE_OK) return rc;
        done += piece;
        atomic_fetch_add_explicit(&flushCount, 1, memory_order_relaxed);
    }
    atomic_fetch_add_explicit(&flushedBytes, length, memory_order_relaxed);
    return SQLITE_OK;
}

/// Writes the WAL buffer of a main database file's connection, if any.
static void flushWALOf(BufferedFile *database) {
    if (database->wal && database->wal->length > 0) (void)flushBuffer(database->wal);
}

static int bufferedClose(sqlite3_file *file) {
    BufferedFile *p = (BufferedFile *)file;
    int rc = flushBuffer(p);
    pthread_mutex_lock(&registryLock);
    if (p->isWAL) {
        if (p->database) p->database->wal = NULL;
    } else {
        if (p->wal) p->wal->database = NULL;
        for (BufferedFile **link = &openDatabases; *link; link = &(*link)->nextDatabase) {
            if (*link == p) { *link = p->nextDatabase; break; }
        }
    }
    pthread_mutex_unlock(&registryLock);
    sqlite3_free(p->buffer);
    p->buffer = NULL;
    int closed = p->real->pMethods ? p->real->pMethods->xClose(p->real) : SQLITE_OK;
    return rc != SQLITE_OK ? rc : closed;
}

static int bufferedRead(sqlite3_file *file, void *data, int amount, sqlite3_int64 offset) {
    BufferedFile *p = (BufferedFile *)file;
    int rc = flushBuffer(p);
    if (rc != SQLITE_OK) return rc;
    return p->real->pMethods->xRead(p->real, data, amount, offset);
}

static int bufferedWrite(sqlite3_file *file, const void *data, int amount, sqlite3_int64 offset) {
    BufferedFile *p = (BufferedFile *)file;
    if (!p->isWAL) return p->real->pMethods->xWrite(p->real, data, amount, offset);
    int rc;
    if (p->length > 0 && (offset != p->start + p->length || p->length + amount > BUFFER_CAPACITY)) {
        // Writing the buffer out for room (or before a jump) keeps a gathered commit header pending: the
        // page that follows it still completes the commit.
        int commitPending = p->commitPending;
        if ((rc = flushBuffer(p)) != SQLITE_OK) return rc;
        p->commitPending = commitPending;
    }
    if (p->buffer == NULL) p->buffer = sqlite3_malloc(BUFFER_CAPACITY);
    if (p->buffer == NULL || amount > BUFFER_CAPACITY) {
        rc = p->real->pMethods->xWrite(p->real, data, amount, offset);
        p->commitPending = 0;
        return rc;
    }
    if (p->length == 0) p->start = offset;
    memcpy(p->buffer + p->length, data, (size_t)amount);
    p->length += amount;
    if (p->commitPending) return flushBuffer(p);
    if (amount == FRAME_HEADER_SIZE) {
        const unsigned char *h = data;
        p->commitPending = (h[4] | h[5] | h[6] | h[7]) != 0;
    }
    return SQLITE_OK;
}

static int bufferedTruncate(sqlite3_file *file, sqlite3_int64 size) {
    BufferedFile *p = (BufferedFile *)file;
    int rc = flushBuffer(p);
    if (rc != SQLITE_OK) return rc;
    return p->real->pMethods->xTruncate(p->real, size);
}

static int bufferedSync(sqlite3_file *file, int flags) {
    BufferedFile *p = (BufferedFile *)file;
    int rc = flushBuffer(p);
    if (rc != SQLITE_OK) return rc;
    return p->real->pMethods->xSync(p->real, flags);
}

static int bufferedFileSize(sqlite3_file *file, sqlite3_int64 *size) {
    BufferedFile *p = (BufferedFile *)file;
    int rc = flushBuffer(p);
    if (rc != SQLITE_OK) return rc;
    return p->real->pMethods->xFileSize(p->real, size);
}

static int bufferedLock(sqlite3_file *file, int lock) {
    BufferedFile *p = (BufferedFile *)file;
    return p->real->pMethods->xLock(p->real, lock);
}

static int bufferedUnlock(sqlite3_file *file, int lock) {
    BufferedFile *p = (BufferedFile *)file;
    return p->real->pMethods->xUnlock(p->real, lock);
}

static int bufferedCheckReservedLock(sqlite3_file *file, int *out) {
    BufferedFile *p = (BufferedFile *)file;
    return p->real->pMethods->xCheckReservedLock(p->real, out);
}

static int bufferedFileControl(sqlite3_file *file, int op, void *arg) {
    BufferedFile *p = (BufferedFile *)file;
    if (p->isWAL) {
        int rc = flushBuffer(p);
        if (rc != SQLITE_OK) return rc;
    }
    return p->real->pMethods->xFileControl(p->real, op, arg);
}

static int bufferedSectorSize(sqlite3_file *file) {
    BufferedFile *p = (BufferedFile *)file;
    return p->real->pMethods->xSectorSize(p->real);
}

static int bufferedDeviceCharacteristics(sqlite3_file *file) {
    BufferedFile *p = (BufferedFile *)file;
    return p->real->pMethods->xDeviceCharacteristics(p->real);
}

static int bufferedShmMap(sqlite3_file *file, int region, int size, int extend, void volatile **out) {
    BufferedFile *p = (BufferedFile *)file;
    return p->real->pMethods->xShmMap(p->real, region, size, extend, out);
}

static int bufferedShmLock(sqlite3_file *file, int offset, int n, int flags) {
    BufferedFile *p = (BufferedFile *)file;
    if (flags & SQLITE_SHM_UNLOCK) flushWALOf(p);
    return p->real->pMethods->xShmLock(p->real, offset, n, flags);
}

static void bufferedShmBarrier(sqlite3_file *file) {
    BufferedFile *p = (BufferedFile *)file;
    flushWALOf(p);
    p->real->pMethods->xShmBarrier(p->real);
}

static int bufferedShmUnmap(sqlite3_file *file, int deleteFlag) {
    BufferedFile *p = (BufferedFile *)file;
    return p->real->pMethods->xShmUnmap(p->real, deleteFlag);
}

static int bufferedFetch(sqlite3_file *file, sqlite3_int64 offset, int amount, void **out) {
    BufferedFile *p = (BufferedFile *)file;
    return p->real->pMethods->xFetch(p->real, offset, amount, out);
}

static int bufferedUnfetch(sqlite3_file *file, sqlite3_int64 offset, void *page) {
    BufferedFile *p = (BufferedFile *)file;
    return p->real->pMethods->xUnfetch(p->real, offset, page);
}

static const sqlite3_io_methods bufferedMethods = {
    3,
    bufferedClose, bufferedRead, bufferedWrite, bufferedTruncate, bufferedSync, bufferedFileSize,
    bufferedLock, bufferedUnlock, bufferedCheckReservedLock, bufferedFileControl, bufferedSectorSize,
    bufferedDeviceCharacteristics, bufferedShmMap, bufferedShmLock, bufferedShmBarrier, bufferedShmUnmap,
    bufferedFetch, bufferedUnfetch,
};

static int bufferedOpen(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *outFlags) {
    (void)vfs;
    BufferedFile *p = (BufferedFile *)file;
    memset(p, 0, sizeof(BufferedFile));
    p->real = (sqlite3_file *)&p[1];
    int rc = underlying->xOpen(underlying, name, p->real, flags, outFlags);
    if (p->real->pMethods == NULL) {
        p->base.pMethods = NULL;
        return rc;
    }
    // Shared memory and memory mapping only as the default VFS offers them.
    if (p->real->pMethods->iVersion < 3) {
        p->base.pMethods = NULL;
        p->real->pMethods->xClose(p->real);
        return SQLITE_CANTOPEN;
    }
    p->base.pMethods = &bufferedMethods;
    p->name = name;
    if (rc != SQLITE_OK || name == NULL) return rc;
    if (flags & SQLITE_OPEN_MAIN_DB) {
        pthread_mutex_lock(&registryLock);
        p->nextDatabase = openDatabases;
        openDatabases = p;
        pthread_mutex_unlock(&registryLock);
    } else if (flags & SQLITE_OPEN_WAL) {
        p->isWAL = 1;
        const char *databaseName = sqlite3_filename_database(name);
        pthread_mutex_lock(&registryLock);
        for (BufferedFile *d = openDatabases; d; d = d->nextDatabase) {
            if (d->name == databaseName) {
                d->wal = p;
                p->database = d;
                break;
            }
        }
        pthread_mutex_unlock(&registryLock);
        if (p->database == NULL) {
            // Without its database file there is no second guard: write straight through.
            p->isWAL = 0;
        }
    }
    return rc;
}

static int forwardDelete(sqlite3_vfs *v, const char *name, int syncDir) { (void)v; return underlying->xDelete(underlying, name, syncDir); }
static int forwardAccess(sqlite3_vfs *v, const char *name, int flags, int *out) { (void)v; return underlying->xAccess(underlying, name, flags, out); }
static int forwardFullPathname(sqlite3_vfs *v, const char *name, int n, char *out) { (void)v; return underlying->xFullPathname(underlying, name, n, out); }
static void *forwardDlOpen(sqlite3_vfs *v, const char *name) { (void)v; return underlying->xDlOpen(underlying, name); }
static void forwardDlError(sqlite3_vfs *v, int n, char *out) { (void)v; underlying->xDlError(underlying, n, out); }
static void (*forwardDlSym(sqlite3_vfs *v, void *h, const char *s))(void) { (void)v; return underlying->xDlSym(underlying, h, s); }
static void forwardDlClose(sqlite3_vfs *v, void *h) { (void)v; underlying->xDlClose(underlying, h); }
static int forwardRandomness(sqlite3_vfs *v, int n, char *out) { (void)v; return underlying->xRandomness(underlying, n, out); }
static int forwardSleep(sqlite3_vfs *v, int micros) { (void)v; return underlying->xSleep(underlying, micros); }
static int forwardCurrentTime(sqlite3_vfs *v, double *out) { (void)v; return underlying->xCurrentTime(underlying, out); }
static int forwardGetLastError(sqlite3_vfs *v, int n, char *out) { (void)v; return underlying->xGetLastError(underlying, n, out); }
static int forwardCurrentTimeInt64(sqlite3_vfs *v, sqlite3_int64 *out) { (void)v; return underlying->xCurrentTimeInt64(underlying, out); }

static sqlite3_vfs bufferedVFS;
static pthread_once_t registerOnce = PTHREAD_ONCE_INIT;
static int registerResult = SQLITE_OK;

static void registerVFS(void) {
    underlying = sqlite3_vfs_find(NULL);
    if (underlying == NULL || underlying->iVersion < 2) {
        registerResult = SQLITE_ERROR;
        return;
    }
    bufferedVFS.iVersion = 2;
    bufferedVFS.szOsFile = (int)sizeof(BufferedFile) + underlying->szOsFile;
    bufferedVFS.mxPathname = underlying->mxPathname;
    bufferedVFS.zName = HEARTH_WAL_BUFFER_VFS;
    bufferedVFS.xOpen = bufferedOpen;
    bufferedVFS.xDelete = forwardDelete;
    bufferedVFS.xAccess = forwardAccess;
    bufferedVFS.xFullPathname = forwardFullPathname;
    bufferedVFS.xDlOpen = forwardDlOpen;
    bufferedVFS.xDlError = forwardDlError;
    bufferedVFS.xDlSym = forwardDlSym;
    bufferedVFS.xDlClose = forwardDlClose;
    bufferedVFS.xRandomness = forwardRandomness;
    bufferedVFS.xSleep = forwardSleep;
    bufferedVFS.xCurrentTime = forwardCurrentTime;
    bufferedVFS.xGetLastError = forwardGetLastError;
    bufferedVFS.xCurrentTimeInt64 = forwardCurrentTimeInt64;
    registerResult = sqlite3_vfs_register(&bufferedVFS, 0);
}

int hearth_wal_buffer_register(void) {
    pthread_once(&registerOnce, registerVFS);
    return registerResult;
}

void hearth_wal_buffer_statistics(long long *flushes, long long *bytes) {
    *flushes = atomic_load_explicit(&flushCount, memory_order_relaxed);
    *bytes = atomic_load_explicit(&flushedBytes, memory_order_relaxed);
}
