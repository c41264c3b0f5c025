import Foundation
import HearthCore
import HearthSQLite
@testable import HearthStore
import HearthTesting
import Testing

/// Composite indexes against the reference evaluator: the datasets of the query differential test, stored
/// with composite indexes over their fields (ascending, descending, array-contains, two and three fields),
/// then random queries and queries shaped to each index (equality on its leading fields, ordering on the
/// rest, either direction, ranges, cursors, limits). Results must equal the reference's, order included,
/// under every planning; the indexes must be built for documents stored before they were defined.
@Suite("Composite index differential")
struct CompositeIndexDifferentialTests {
    static let indexes: [CompositeIndex] = {
        func f(_ name: String, _ kind: CompositeIndex.Kind) -> CompositeIndex.Component {
            CompositeIndex.Component(try! FieldPath(parsing: name), kind)
        }
        return [
            CompositeIndex(collectionGroup: "users", fields: [f("a", .ascending), f("b", .ascending)]),
            CompositeIndex(collectionGroup: "users", fields: [f("a", .ascending), f("b", .descending)]),
            CompositeIndex(collectionGroup: "users", fields: [f("b", .descending), f("a", .ascending)]),
            CompositeIndex(collectionGroup: "users", fields: [f("a", .descending), f("c", .ascending)]),
            CompositeIndex(collectionGroup: "users", fields: [f("tags", .contains), f("a", .ascending)]),
            CompositeIndex(collectionGroup: "users", fields: [f("tags", .contains), f("b", .descending)]),
            CompositeIndex(collectionGroup: "users", fields: [f("c", .ascending), f("m.x", .descending)]),
            CompositeIndex(collectionGroup: "users", fields: [f("a", .ascending), f("b", .ascending), f("c", .descending)]),
            CompositeIndex(collectionGroup: "users", fields: [f("b", .ascending), f("a", .descending), f("c", .ascending)]),
        ]
    }()

    @Test(arguments: QueryDifferentialTests.seeds.prefix(4))
    func compositeIndexedEqualsReference(seed: UInt64) async throws {
        try await HeavyWork.run { try await checkCompositeIndexedEqualsReference(seed: seed) }
    }

    private func checkCompositeIndexedEqualsReference(seed: UInt64) async throws {
        let differential = QueryDifferentialTests()
        // Half the indexes exist while the data is written; the other half are built when the store reopens.
        try await differential.withReopenedDataset(seed: seed, writing: {
            $0.compositeIndexes = Self.indexes.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
        }, reading: { $0.compositeIndexes = Self.indexes }) { store, docs, r in
            var composite = 0
            for round in 0..<600 {
                var q = round % 3 == 0 ? r.query(over: QueryDifferentialTests.collections[0]) : Self.shaped(&r)
                differential.mutate(&q, docs: docs, &r)
                guard (try? q.validate()) != nil else { continue }
                if try await store.read({ [q] in try Self.usesComposite(q, $0) }) { composite += 1 }
                if let failure = try await differential.compare(q, docs: docs, store: store) {
                    let small = try await differential.shrink(q, docs: docs, store: store)
                    Issue.record("""
                        seed \(seed) query \(round): \(failure)
                        query: \(q.jsonText)
                        shrunk: \(small.jsonText)
                        """)
                    return
                }
                // Counts the index decides alone count composite rows (cursors resolved, as the engine hands them on).
                guard var counted = try? QueryDifferentialTests.resolvingCursors(q, in: docs) else { continue }
                counted.select = nil
                let aggregate = AggregateQuery(query: counted, aggregations: [.init("n", .count(upTo: nil))])
                if (try? aggregate.validate()) != nil {
                    let expected = try? aggregate.compute(over: docs)
                    let actual = try? await store.read { try $0.runAggregate(aggregate).result }
                    #expect(expected == actual, "seed \(seed) count \(round): \(counted.jsonText)")
                }
            }
            #expect(composite > 150, "only \(composite) queries were planned over a composite index")
        }
    }

    /// A query an index serves: equality (or array-contains) on its leading fields, ordering on the rest.
    static func shaped(_ r: inout RandomValues) -> Query {
        let index = r.pick(indexes)
        let fixed = r.int(0...(index.fields.count - 1))
        var filters: [Filter] = []
        for c in index.fields[..<fixed] {
            filters.append(.field(FieldFilter(field: c.field, op: c.kind == .contains ? .arrayContains : .equal, value: r.smallValue())))
        }
        let rest = index.fields[fixed...].filter { $0.kind != .contains }
        let reversed = r.chance(0.4)
        var q = Query(source: r.chance(0.8) ? .collection(QueryDifferentialTests.collections[0])
                                            : .collectionGroup(id: "users", under: nil))
        q.orderBy = rest.map { Query.Order($0.field, ($0.kind == .ascending) != reversed ? .ascending : .descending) }
        if let first = rest.first, r.chance(0.6) {
            let ops: [FilterOperator] = [.lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual, .notEqual, .in, .notIn]
            let op = r.pick(ops)
            let value: Value = op.takesList ? .array((0..<r.int(1...3)).map { _ in r.smallValue() }) : r.smallValue()
            filters.append(.field(FieldFilter(field: first.field, op: op, value: value)))
        }
        if r.chance(0.2) { filters.append(.field(r.fieldFilter())) }
        q.filter = filters.isEmpty ? nil : filters.count == 1 ? filters[0] : .and(filters)
        if r.chance(0.5) { q.limit = r.int(1...6) } else if r.chance(0.3) { q.limitToLast = r.int(1...4) }
        if r.chance(0.2) { q.offset = r.int(0...2) }
        if r.chance(0.2) { q.start = Query.Cursor(.values([r.smallValue()]), inclusive: r.chance(0.5)) }
        if r.chance(0.2) { q.end = Query.Cursor(.values([r.smallValue()]), inclusive: r.chance(0.5)) }
        return q
    }

    /// Whether the planner serves the query (forward form) from a composite index.
    static func usesComposite(_ q: Query, _ reader: ReadContext) throws -> Bool {
        let forward = q.limitToLast != nil ? q.reversed : q
        let plan = try QueryPlanner(query: forward, reader: reader, planning: .init()).plan()
        return plan.scans.first?.field.hasPrefix(CompositeIndex.marker) == true
    }
}
