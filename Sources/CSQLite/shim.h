#include <sqlite3.h>

/// Turns off SQLite's memory-use statistics, which Hearth never reads: with them on, every allocation and
/// free in SQLite takes one process-wide mutex, which every connection (readers, point readers, writer)
/// then contends for. Must run before SQLite initializes (before the first connection opens); answers
/// SQLITE_MISUSE after that. `sqlite3_config` is variadic, which Swift cannot call directly.
static inline int hearth_sqlite3_disable_memstatus(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
