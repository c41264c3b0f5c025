import Foundation
import HearthCore
import HearthSQLite
import Logging

/// Index definitions at open: the entries brought in line with the composite indexes and field overrides
/// configured, or the definitions the folder was last served with read back.
extension Store {
    /// Brings the field index's composite entries in line with the definitions: indexes new since the last
    /// start get entries for every stored document of their collection id, and indexes no longer defined
    /// lose theirs, in one transaction before the store serves anything.
    static func reconcile(_ composites: CompositeIndexes, on connection: SQLiteConnection, logger: Logger) throws {
        var stored: Set<[String]> = []
        let rows = try connection.prepare("SELECT entry_field, collection_id FROM composite_indexes")
        while try rows.step() { stored.insert([rows.text(0), rows.text(1)]) }
        rows.reset()
        let wanted = Set(composites.all.map { [$0.entryField, $0.collectionGroup] })
        if stored == wanted { return }
        try connection.execute("BEGIN IMMEDIATE")
        do {
            for gone in stored.subtracting(wanted) {
                // Another collection id may still use the same fields: drop only this one's scopes.
                try deleteEntries(on: connection, of: gone[1], where: "field = ?", gone[0])
                let d = try connection.prepare("DELETE FROM composite_indexes WHERE entry_field = ? AND collection_id = ?")
                d.bind(1, gone[0]); d.bind(2, gone[1])
                try d.run()
                logger.info("composite index dropped", metadata: ["index": "\(gone[1]) \(gone[0].dropFirst())"])
            }
            for index in composites.all where !stored.contains([index.entryField, index.collectionGroup]) {
                var count = 0
                try Schema.forEachStoredDocument(on: connection, collectionID: index.collectionGroup) { path, fields in
                    let entries = IndexEntry.compositeEntries(of: fields, indexes: [index])
                    try WriteContext.updateIndex(on: connection, path, removing: [], adding: entries)
                    count += 1
                }
                let i = try connection.prepare("INSERT INTO composite_indexes(entry_field, collection_id) VALUES (?, ?)")
                i.bind(1, index.entryField); i.bind(2, index.collectionGroup)
                try i.run()
                logger.info("composite index built", metadata: ["index": "\(index)", "documents": "\(count)"])
            }
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    /// The composite indexes and overrides the entries were last built with (what `reconcile` and
    /// `reconcileOverrides` recorded).
    static func servedDefinitions(on connection: SQLiteConnection) throws -> CompositeIndexes {
        var indexes: [CompositeIndex] = []
        let rows = try connection.prepare("SELECT entry_field, collection_id FROM composite_indexes ORDER BY collection_id, entry_field")
        while try rows.step() {
            guard let index = CompositeIndex(entryField: rows.text(0), collectionGroup: rows.text(1)) else {
                throw HearthError.internal("the stored composite index '\(rows.text(0).dropFirst())' of '\(rows.text(1))' cannot be read")
            }
            indexes.append(index)
        }
        rows.reset()
        return CompositeIndexes(indexes, overrides: try storedOverrides(on: connection))
    }

    /// The single-field overrides the entries were last built with.
    static func storedOverrides(on connection: SQLiteConnection) throws -> [FieldOverride] {
        var overrides: [FieldOverride] = []
        let rows = try connection.prepare(
            "SELECT collection_id, field, value_entries, contains_entries FROM field_overrides ORDER BY collection_id, field")
        defer { rows.reset() }
        while try rows.step() {
            guard let field = try? FieldPath(parsing: rows.text(1)) else {
                throw HearthError.internal("the stored field override '\(rows.text(1))' of '\(rows.text(0))' cannot be read")
            }
            overrides.append(FieldOverride(collectionGroup: rows.text(0), field: field,
                                           indexing: FieldIndexing(values: rows.int(2) != 0, contains: rows.int(3) != 0)))
        }
        return overrides
    }

    /// Deletes the field-index rows of one collection id's scopes (its group's and each of its collections')
    /// whose `field` column meets `fieldCondition`, which takes `parameter`.
    static func deleteEntries(on connection: SQLiteConnection, of collectionID: String, where fieldCondition: String,
                              _ parameter: String) throws {
        let s = try connection.prepare("""
            DELETE FROM field_index WHERE \(fieldCondition) AND (scope = ? OR scope LIKE ? ESCAPE '\\' OR scope LIKE ? ESCAPE '\\')
            """)
        let id = likeEscaped(collectionID)
        s.bind(1, parameter); s.bind(2, "g" + collectionID); s.bind(3, "c%/" + id); s.bind(4, "c" + id)
        try s.run()
    }

    /// Brings the single-field entries in line with the overrides: each collection id whose overrides differ
    /// from those the entries were built with loses its single-field entries (not `__name__`'s, which every
    /// document keeps, nor the composite indexes') and gets them again for every stored document, in one
    /// transaction before the store serves anything.
    static func reconcileOverrides(_ definitions: CompositeIndexes, on connection: SQLiteConnection, logger: Logger) throws {
        let stored = Dictionary(grouping: try storedOverrides(on: connection), by: \.collectionGroup).mapValues(Set.init)
        let wanted = Dictionary(grouping: definitions.overrides, by: \.collectionGroup).mapValues(Set.init)
        let changed = Set(stored.keys).union(wanted.keys).filter { stored[$0] != wanted[$0] }
        if changed.isEmpty { return }
        try connection.execute("BEGIN IMMEDIATE")
        do {
            for id in changed.sorted() {
                // Single-field rows: not the composite indexes' (their marker) and not `__name__`'s.
                try deleteEntries(on: connection, of: id, where: "substr(field, 1, 1) <> ? AND field <> '\(IndexEntry.nameField)'",
                                  CompositeIndex.marker)
                let overrides = definitions.overrides(of: id)
                var count = 0
                try Schema.forEachStoredDocument(on: connection, collectionID: id) { path, fields in
                    let entries = try IndexEntry.entries(of: fields, limit: .max, overrides: overrides)
                    try WriteContext.updateIndex(on: connection, path, removing: [], adding: entries)
                    count += 1
                }
                let d = try connection.prepare("DELETE FROM field_overrides WHERE collection_id = ?")
                d.bind(1, id)
                try d.run()
                for o in wanted[id] ?? [] {
                    let i = try connection.prepare(
                        "INSERT INTO field_overrides(collection_id, field, value_entries, contains_entries) VALUES (?, ?, ?, ?)")
                    i.bind(1, id); i.bind(2, o.field.description)
                    i.bind(3, Int64(o.indexing.values ? 1 : 0)); i.bind(4, Int64(o.indexing.contains ? 1 : 0))
                    try i.run()
                }
                logger.info("field overrides applied: single-field index entries rebuilt",
                            metadata: ["collectionGroup": "\(id)", "overrides": "\(wanted[id]?.count ?? 0)", "documents": "\(count)"])
            }
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    static func likeEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_")
    }
}
