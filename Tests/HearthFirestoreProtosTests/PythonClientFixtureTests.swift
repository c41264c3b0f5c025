import Foundation
import SwiftProtobuf
import Testing
import HearthFirestoreProtos

/// Messages serialized by the official Python client (`protos/fixtures/python-client.txt`) decode into the
/// generated messages field for field, with no field left unknown: the field numbers, types and oneofs of
/// `protos/` are the client's. Encoded again, each gives back the client's bytes exactly.
@Suite struct PythonClientFixtureTests {
    typealias Query = Google_Firestore_V1_StructuredQuery
    static let root = "projects/demo/databases/(default)/documents"
    static let database = "projects/demo/databases/(default)"

    static func timestamp(_ seconds: Int64, _ nanos: Int32 = 0) -> Google_Protobuf_Timestamp {
        Google_Protobuf_Timestamp(seconds: seconds, nanos: nanos)
    }

    @Test func everyFixtureDecodesWithNoUnknownField() throws {
        let decoders: [String: (String) throws -> any SwiftProtobuf.Message] = [
            "document_every_value": { try ProtoFixtures.decode($0, as: Google_Firestore_V1_Document.self) },
            "structured_query": { try ProtoFixtures.decode($0, as: Query.self) },
            "run_query_request": { try ProtoFixtures.decode($0, as: Google_Firestore_V1_RunQueryRequest.self) },
            "run_query_response": { try ProtoFixtures.decode($0, as: Google_Firestore_V1_RunQueryResponse.self) },
            "run_aggregation_query_request": {
                try ProtoFixtures.decode($0, as: Google_Firestore_V1_RunAggregationQueryRequest.self)
            },
            "commit_request": { try ProtoFixtures.decode($0, as: Google_Firestore_V1_CommitRequest.self) },
            "listen_request": { try ProtoFixtures.decode($0, as: Google_Firestore_V1_ListenRequest.self) },
            "listen_response_target_change": { try ProtoFixtures.decode($0, as: Google_Firestore_V1_ListenResponse.self) },
            "listen_response_current": { try ProtoFixtures.decode($0, as: Google_Firestore_V1_ListenResponse.self) },
            "listen_response_filter": { try ProtoFixtures.decode($0, as: Google_Firestore_V1_ListenResponse.self) },
            "listen_response_document_change": {
                try ProtoFixtures.decode($0, as: Google_Firestore_V1_ListenResponse.self)
            },
            "listen_response_document_delete": {
                try ProtoFixtures.decode($0, as: Google_Firestore_V1_ListenResponse.self)
            },
            "listen_response_document_remove": {
                try ProtoFixtures.decode($0, as: Google_Firestore_V1_ListenResponse.self)
            },
            "batch_get_documents_request": {
                try ProtoFixtures.decode($0, as: Google_Firestore_V1_BatchGetDocumentsRequest.self)
            },
            "batch_get_documents_response": {
                try ProtoFixtures.decode($0, as: Google_Firestore_V1_BatchGetDocumentsResponse.self)
            },
            "batch_write_response": { try ProtoFixtures.decode($0, as: Google_Firestore_V1_BatchWriteResponse.self) },
            "list_documents_request": { try ProtoFixtures.decode($0, as: Google_Firestore_V1_ListDocumentsRequest.self) },
            "list_collection_ids_request": {
                try ProtoFixtures.decode($0, as: Google_Firestore_V1_ListCollectionIdsRequest.self)
            },
            "update_document_request": {
                try ProtoFixtures.decode($0, as: Google_Firestore_V1_UpdateDocumentRequest.self)
            },
            "begin_transaction_request": {
                try ProtoFixtures.decode($0, as: Google_Firestore_V1_BeginTransactionRequest.self)
            },
        ]
        #expect(Set(decoders.keys) == Set(ProtoFixtures.pythonClient.keys))
        var options = BinaryEncodingOptions()
        options.useDeterministicOrdering = true
        for (name, decode) in decoders.sorted(by: { $0.key < $1.key }) {
            let message = try decode(name)
            #expect(ProtoFixtures.unknownFields(in: message) == [], "\(name)")
            // Both sides write fields in number order and map entries by key: the same bytes come back.
            let encoded: [UInt8] = try message.serializedBytes(options: options)
            #expect(encoded == ProtoFixtures.pythonClient[name], "\(name)")
        }
    }

    @Test func aFieldNumberTheMessageLacksIsReportedUnknown() throws {
        // ListenResponse.filter is field 5, which Cursor does not have: the check above would see it.
        let wrong: Google_Firestore_V1_Cursor = try ProtoFixtures.decode("listen_response_filter")
        let unknown = ProtoFixtures.unknownFields(in: wrong)
        #expect(unknown.first?.hasPrefix("5 {") == true, "\(unknown)")
    }

    @Test func documentWithEveryValueType() throws {
        let document: Google_Firestore_V1_Document = try ProtoFixtures.decode("document_every_value")
        #expect(document.name == Self.root + "/rooms/r1")
        #expect(document.createTime == Self.timestamp(1_700_000_000, 1000))
        #expect(document.updateTime == Self.timestamp(1_700_000_001, 2000))
        let fields = document.fields
        #expect(fields.count == 11)
        #expect(fields["nothing"]?.valueType == .nullValue(.nullValue))
        #expect(fields["flag"]?.booleanValue == true)
        #expect(fields["count"]?.integerValue == -9_007_199_254_740_993)
        #expect(fields["ratio"]?.doubleValue == 2.5)
        #expect(fields["when"]?.timestampValue == Self.timestamp(1_700_000_000, 123_456_000))
        #expect(fields["title"]?.stringValue == "héllo ✓")
        #expect(fields["blob"]?.bytesValue == Data([0x00, 0x01, 0xFE, 0xFF]))
        #expect(fields["owner"]?.referenceValue == Self.root + "/users/u1")
        #expect(fields["place"]?.geoPointValue.latitude == 48.8566)
        #expect(fields["place"]?.geoPointValue.longitude == 2.3522)
        let tags = try #require(fields["tags"]?.arrayValue.values)
        #expect(tags.count == 3)
        #expect(tags[0].stringValue == "a")
        #expect(tags[1].integerValue == 2)
        #expect(tags[2].mapValue.fields["k"]?.valueType == .booleanValue(false))
        #expect(fields["meta"]?.mapValue.fields["depth"]?.mapValue.fields["n"]?.doubleValue == -0.5)
    }

    @Test func structuredQueryWithCompositeFiltersAndCursors() throws {
        let query: Query = try ProtoFixtures.decode("structured_query")
        #expect(query.select.fields.map(\.fieldPath) == ["title", "`odd.name`"])
        #expect(query.from.count == 1)
        #expect(query.from[0].collectionID == "rooms")
        #expect(query.from[0].allDescendants)

        let or = query.where.compositeFilter
        #expect(or.op == .or)
        #expect(or.filters.count == 3)
        let and = or.filters[0].compositeFilter
        #expect(and.op == .and)
        #expect(and.filters[0].fieldFilter.field.fieldPath == "count")
        #expect(and.filters[0].fieldFilter.op == .lessThan)
        #expect(and.filters[0].fieldFilter.value.integerValue == 10)
        #expect(and.filters[1].fieldFilter.op == .in)
        #expect(and.filters[1].fieldFilter.value.arrayValue.values.map(\.stringValue) == ["a", "b"])
        #expect(or.filters[1].unaryFilter.op == .isNotNull)
        #expect(or.filters[1].unaryFilter.field.fieldPath == "owner")
        #expect(or.filters[2].fieldFilter.op == .notIn)

        #expect(query.orderBy.map(\.field.fieldPath) == ["count", "__name__"])
        #expect(query.orderBy.map(\.direction) == [.descending, .ascending])
        #expect(query.startAt.before)
        #expect(query.startAt.values.map(\.valueType) == [.integerValue(7), .referenceValue(Self.root + "/rooms/r1")])
        #expect(query.hasEndAt && !query.endAt.before)
        #expect(query.endAt.values.map(\.integerValue) == [1])
        #expect(query.offset == 3)
        #expect(query.hasLimit && query.limit.value == 20)
    }

    @Test func runQueryRequestAndResponse() throws {
        let request: Google_Firestore_V1_RunQueryRequest = try ProtoFixtures.decode("run_query_request")
        #expect(request.parent == Self.root)
        #expect(request.structuredQuery.from.map(\.collectionID) == ["rooms"])
        guard case .newTransaction(let options) = request.consistencySelector else {
            Issue.record("expected new_transaction, got \(String(describing: request.consistencySelector))")
            return
        }
        #expect(options.readOnly.readTime == Self.timestamp(1_700_000_000))
        #expect(request.hasExplainOptions && request.explainOptions.analyze)

        let response: Google_Firestore_V1_RunQueryResponse = try ProtoFixtures.decode("run_query_response")
        #expect(response.transaction == Data("tx-1".utf8))
        #expect(!response.hasDocument)
        #expect(response.readTime == Self.timestamp(1_700_000_002, 5))
        #expect(response.skippedResults == 2)
        #expect(response.continuationSelector == .done(true))
        let stats = response.explainMetrics.executionStats
        #expect(stats.resultsReturned == 4)
        #expect(stats.readOperations == 5)
        #expect(stats.executionDuration == Google_Protobuf_Duration(seconds: 0, nanos: 1_500_000))
        let index = try #require(response.explainMetrics.planSummary.indexesUsed.first)
        #expect(index.fields["query_scope"]?.stringValue == "Collection")
    }

    @Test func aggregationQuery() throws {
        let request: Google_Firestore_V1_RunAggregationQueryRequest =
            try ProtoFixtures.decode("run_aggregation_query_request")
        #expect(request.parent == Self.root)
        #expect(request.consistencySelector == .transaction(Data("tx-2".utf8)))
        let query = request.structuredAggregationQuery
        #expect(query.structuredQuery.from.map(\.collectionID) == ["rooms"])
        #expect(query.aggregations.map(\.alias) == ["n", "total", "mean"])
        #expect(query.aggregations[0].count.upTo.value == 100)
        #expect(query.aggregations[1].sum.field.fieldPath == "count")
        #expect(query.aggregations[2].avg.field.fieldPath == "ratio")
    }

    @Test func commitWithEveryKindOfWrite() throws {
        let request: Google_Firestore_V1_CommitRequest = try ProtoFixtures.decode("commit_request")
        #expect(request.database == Self.database)
        #expect(request.transaction == Data("tx-3".utf8))
        #expect(request.writes.count == 3)

        let update = request.writes[0]
        #expect(update.update.name == Self.root + "/rooms/r1")
        #expect(update.update.fields["title"]?.stringValue == "new")
        #expect(update.updateMask.fieldPaths == ["title", "gone"])
        #expect(update.updateTransforms.map(\.fieldPath) == ["stamp", "count", "tags"])
        #expect(update.updateTransforms[0].setToServerValue == .requestTime)
        #expect(update.updateTransforms[1].increment.integerValue == 1)
        #expect(update.updateTransforms[2].appendMissingElements.values.map(\.stringValue) == ["z"])
        #expect(update.currentDocument.conditionType == .exists(true))

        let delete = request.writes[1]
        #expect(delete.operation == .delete(Self.root + "/rooms/r2"))
        #expect(delete.currentDocument.conditionType == .updateTime(Self.timestamp(1_700_000_000, 9000)))

        let transform = request.writes[2].transform
        #expect(transform.document == Self.root + "/rooms/r3")
        #expect(transform.fieldTransforms[0].minimum.doubleValue == 0.5)
        #expect(transform.fieldTransforms[1].removeAllFromArray.values.map(\.stringValue) == ["a"])
    }

    @Test func listenRequestAddsATarget() throws {
        let request: Google_Firestore_V1_ListenRequest = try ProtoFixtures.decode("listen_request")
        #expect(request.database == Self.database)
        #expect(request.labels == ["goog-listen-tags": "existence-filter-mismatch"])
        let target = request.addTarget
        #expect(target.targetID == 2)
        #expect(!target.once)
        #expect(target.resumeType == .resumeToken(Data([0x01, 0x02]) + Data("resume".utf8)))
        #expect(target.hasExpectedCount && target.expectedCount.value == 3)
        #expect(target.query.parent == Self.root)
        #expect(target.query.structuredQuery.limit.value == 5)
    }

    @Test func listenResponses() throws {
        let removed: Google_Firestore_V1_ListenResponse = try ProtoFixtures.decode("listen_response_target_change")
        #expect(removed.targetChange.targetChangeType == .remove)
        #expect(removed.targetChange.targetIds == [2, 4])
        #expect(removed.targetChange.cause.code == 7)
        #expect(removed.targetChange.cause.message == "Missing or insufficient permissions.")
        #expect(removed.targetChange.resumeToken == Data("token-9".utf8))
        #expect(removed.targetChange.readTime == Self.timestamp(1_700_000_003, 7000))

        let current: Google_Firestore_V1_ListenResponse = try ProtoFixtures.decode("listen_response_current")
        #expect(current.targetChange.targetChangeType == .current)
        #expect(current.targetChange.targetIds == [2])
        #expect(!current.targetChange.hasReadTime)

        let filter: Google_Firestore_V1_ListenResponse = try ProtoFixtures.decode("listen_response_filter")
        #expect(filter.filter.targetID == 2)
        #expect(filter.filter.count == 3)
        #expect(filter.filter.unchangedNames.bits.bitmap == Data([0x5A, 0x01]))
        #expect(filter.filter.unchangedNames.bits.padding == 4)
        #expect(filter.filter.unchangedNames.hashCount == 7)

        let change: Google_Firestore_V1_ListenResponse = try ProtoFixtures.decode("listen_response_document_change")
        #expect(change.documentChange.document.name == Self.root + "/rooms/r1")
        #expect(change.documentChange.document.updateTime == Self.timestamp(1_700_000_004))
        #expect(change.documentChange.targetIds == [2])
        #expect(change.documentChange.removedTargetIds == [4])

        let delete: Google_Firestore_V1_ListenResponse = try ProtoFixtures.decode("listen_response_document_delete")
        #expect(delete.documentDelete.document == Self.root + "/rooms/r1")
        #expect(delete.documentDelete.removedTargetIds == [2])
        #expect(delete.documentDelete.readTime == Self.timestamp(1_700_000_005))

        let remove: Google_Firestore_V1_ListenResponse = try ProtoFixtures.decode("listen_response_document_remove")
        #expect(remove.documentRemove.removedTargetIds == [3])
        #expect(remove.documentRemove.readTime == Self.timestamp(1_700_000_006))
    }

    @Test func otherRequestsAndResponses() throws {
        let batchGet: Google_Firestore_V1_BatchGetDocumentsRequest = try ProtoFixtures.decode("batch_get_documents_request")
        #expect(batchGet.database == Self.database)
        #expect(batchGet.documents == [Self.root + "/rooms/r1", Self.root + "/rooms/r2"])
        #expect(batchGet.mask.fieldPaths == ["title"])
        #expect(batchGet.newTransaction.readWrite.retryTransaction == Data("old".utf8))

        let missing: Google_Firestore_V1_BatchGetDocumentsResponse = try ProtoFixtures.decode("batch_get_documents_response")
        #expect(missing.result == .missing(Self.root + "/rooms/r9"))
        #expect(missing.transaction == Data("tx-4".utf8))
        #expect(missing.readTime == Self.timestamp(1_700_000_007))

        let batchWrite: Google_Firestore_V1_BatchWriteResponse = try ProtoFixtures.decode("batch_write_response")
        #expect(batchWrite.writeResults.count == 2)
        #expect(batchWrite.writeResults[0].updateTime == Self.timestamp(1_700_000_008))
        #expect(batchWrite.writeResults[0].transformResults.map(\.integerValue) == [2])
        #expect(batchWrite.status.map(\.code) == [0, 9])
        #expect(batchWrite.status[1].message == "failed precondition")

        let list: Google_Firestore_V1_ListDocumentsRequest = try ProtoFixtures.decode("list_documents_request")
        #expect(list.parent == Self.root + "/rooms/r1")
        #expect(list.collectionID == "messages")
        #expect(list.pageSize == 50 && list.pageToken == "p2")
        #expect(list.orderBy == "__name__ desc")
        #expect(list.showMissing)
        #expect(list.readTime == Self.timestamp(1_700_000_009))

        let ids: Google_Firestore_V1_ListCollectionIdsRequest = try ProtoFixtures.decode("list_collection_ids_request")
        #expect(ids.parent == Self.root && ids.pageSize == 10 && ids.pageToken == "next")
        #expect(ids.consistencySelector == .readTime(Self.timestamp(1_700_000_010)))

        let update: Google_Firestore_V1_UpdateDocumentRequest = try ProtoFixtures.decode("update_document_request")
        #expect(update.document.fields["a"]?.booleanValue == true)
        #expect(update.updateMask.fieldPaths == ["a"])
        #expect(update.mask.fieldPaths == ["a", "b"])
        #expect(update.currentDocument.conditionType == .exists(false))

        let begin: Google_Firestore_V1_BeginTransactionRequest = try ProtoFixtures.decode("begin_transaction_request")
        #expect(begin.database == Self.database)
        #expect(begin.options.readWrite.concurrencyMode == .pessimistic)
    }
}
