#ifndef HEARTH_WAL_BUFFER_H
#define HEARTH_WAL_BUFFER_H

/// The name of the SQLite VFS that gathers a connection's WAL appends into one write per commit.
#define HEARTH_WAL_BUFFER_VFS "hearth-wal-buffer"

/// Registers the VFS (not as the default) over the default VFS; idempotent. Answers an SQLite result code.
int hearth_wal_buffer_register(void);

/// How many times a connection of this process flushed its WAL buffer, and how many bytes it wrote that way.
void hearth_wal_buffer_statistics(long long *flushes, long long *bytes);

#endif
