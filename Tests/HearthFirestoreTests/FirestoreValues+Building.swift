import Foundation
import HearthFirestoreProtos
import SwiftProtobuf

/// Short ways to write Firestore's values in the tables of these tests.
typealias FValue = Google_Firestore_V1_Value

extension Google_Firestore_V1_Value {
    static func int(_ i: Int64) -> Self { .with { $0.integerValue = i } }
    static func double(_ d: Double) -> Self { .with { $0.doubleValue = d } }
    static func string(_ s: String) -> Self { .with { $0.stringValue = s } }
    static func bool(_ b: Bool) -> Self { .with { $0.booleanValue = b } }
    static var null: Self { .with { $0.nullValue = .nullValue } }
    static func array(_ items: [Self]) -> Self { .with { $0.arrayValue = .with { $0.values = items } } }
    static func map(_ fields: [String: Self]) -> Self { .with { $0.mapValue = .with { $0.fields = fields } } }
}

extension Google_Firestore_V1_StructuredQuery {
    /// A query of one collection.
    static func from(_ collection: String, allDescendants: Bool = false) -> Self {
        .with { $0.from = [.with { $0.collectionID = collection; $0.allDescendants = allDescendants }] }
    }

    static func fieldFilter(_ field: String, _ op: FieldFilter.Operator, _ value: Google_Firestore_V1_Value) -> Filter {
        .with { $0.fieldFilter = .with { $0.field = .with { $0.fieldPath = field }; $0.op = op; $0.value = value } }
    }

    static func composite(_ op: CompositeFilter.Operator, _ filters: [Filter]) -> Filter {
        .with { $0.compositeFilter = .with { $0.op = op; $0.filters = filters } }
    }

    static func order(_ field: String, _ direction: Direction = .ascending) -> Order {
        .with { $0.field = .with { $0.fieldPath = field }; $0.direction = direction }
    }
}

/// The ids of documents, in order.
func ids(_ documents: [Google_Firestore_V1_Document]) -> [String] {
    documents.map { String($0.name.split(separator: "/").last ?? "") }
}
