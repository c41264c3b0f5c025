import CSQLite
import HearthSQLite
import HearthStore
import Testing

/// Process-wide SQLite settings that `SQLiteConnection` applies before the first connection opens.
@Suite struct SQLiteConfigurationTests {
    /// Memory statistics are off, so SQLite's allocations take no process-wide mutex: with them on, the
    /// bytes in use would be counted (and be far above zero with a store open).
    @Test func memoryStatisticsAreOff() async throws {
        try await withTemporaryStore { store in
            try await put("c/d", #"{"a": 1}"#, in: store)
            var current: Int64 = -1, highest: Int64 = -1
            #expect(sqlite3_status64(SQLITE_STATUS_MEMORY_USED, &current, &highest, 0) == SQLITE_OK)
            #expect(current == 0)
        }
    }
}
