import GRPCCore
import Testing
import HearthFirestoreProtos

/// The generated service has Firestore's gRPC method paths and streaming kinds, as its clients call them.
@Suite struct ServiceDescriptorTests {
    @Test func methodPathsAndKinds() {
        let expected: [String: MethodDescriptor.RPCType] = [
            "GetDocument": .unary, "ListDocuments": .unary, "UpdateDocument": .unary, "DeleteDocument": .unary,
            "BatchGetDocuments": .serverStreaming, "BeginTransaction": .unary, "Commit": .unary, "Rollback": .unary,
            "RunQuery": .serverStreaming, "ExecutePipeline": .serverStreaming, "RunAggregationQuery": .serverStreaming,
            "PartitionQuery": .unary, "Write": .bidirectionalStreaming, "Listen": .bidirectionalStreaming,
            "ListCollectionIds": .unary, "BatchWrite": .unary, "CreateDocument": .unary,
        ]
        let descriptors = Google_Firestore_V1_Firestore.Method.descriptors
        #expect(descriptors.count == expected.count)
        for descriptor in descriptors {
            #expect(descriptor.fullyQualifiedMethod == "google.firestore.v1.Firestore/\(descriptor.method)")
            #expect(descriptor.type == expected[descriptor.method], "\(descriptor.method)")
        }
        #expect(Google_Firestore_V1_Firestore.Method.Commit.descriptor.fullyQualifiedMethod
            == "google.firestore.v1.Firestore/Commit")
    }
}
