import HearthCore
import HearthEngine
import HearthFirestoreProtos
import SwiftProtobuf

/// Firestore's `Write` messages as Hearth's writes. A write with `update` and no mask replaces the document
/// (a set; with `exists: false` a create); with a mask it changes only the masked fields, deleting those the
/// document leaves out; `delete` deletes; `transform` alone applies its transforms to the document as it is.
extension FirestoreDatabase {
    func write(_ proto: Google_Firestore_V1_Write, at place: String) throws(HearthError) -> Write {
        do {
            return try write(proto)
        } catch {
            throw HearthError(error.code, "\(place): \(error.message)")
        }
    }

    func write(_ proto: Google_Firestore_V1_Write) throws(HearthError) -> Write {
        let precondition = try proto.hasCurrentDocument ? precondition(proto.currentDocument) : nil
        switch proto.operation {
        case nil:
            throw .invalidArgument("a write needs an operation: update, delete or transform")
        case .delete(let name)?:
            if !proto.updateTransforms.isEmpty { throw .invalidArgument("a delete takes no update_transforms") }
            return Write(kind: .delete, path: try documentPath(name), precondition: precondition)
        case .transform(let transform)?:
            let path = try documentPath(transform.document)
            return Write(kind: .set(merge: []), path: path, transforms: try transforms(transform.fieldTransforms),
                         precondition: precondition)
        case .update(let document)?:
            let path = try documentPath(document.name)
            let fields = try fields(document.fields)
            let transforms = try transforms(proto.updateTransforms)
            if proto.hasUpdateMask {
                let mask = try Self.mask(proto.updateMask)
                if precondition == .exists(true) {
                    return Write(kind: .update(mask: mask), path: path, fields: fields, transforms: transforms,
                                 precondition: precondition)
                }
                return Write(kind: .set(merge: mask), path: path, fields: fields, transforms: transforms,
                             precondition: precondition)
            }
            if precondition == .exists(false) {
                return Write(kind: .create, path: path, fields: fields, transforms: transforms, precondition: precondition)
            }
            return Write(kind: .set(merge: nil), path: path, fields: fields, transforms: transforms, precondition: precondition)
        }
    }

    func precondition(_ proto: Google_Firestore_V1_Precondition) throws(HearthError) -> Precondition? {
        switch proto.conditionType {
        case nil: return nil
        case .exists(let exists)?: return .exists(exists)
        case .updateTime(let t)?:
            let time = try Self.timestamp(t, field: "current_document.update_time")
            // No document can have been updated at a time still to come: Firestore refuses such a precondition.
            if time > Timestamp.now() {
                throw .invalidArgument("current_document.update_time \(time) is in the future")
            }
            return .updateTime(time)
        }
    }

    func transforms(_ protos: [Google_Firestore_V1_DocumentTransform.FieldTransform]) throws(HearthError) -> [FieldTransformEntry] {
        var out: [FieldTransformEntry] = []
        var seen = Set<FieldPath>()
        for proto in protos {
            let field: FieldPath
            do { field = try FieldPath(parsing: proto.fieldPath) } catch {
                throw .invalidArgument("transform field path '\(proto.fieldPath.prefix(200))': \(error.message)")
            }
            guard seen.insert(field).inserted else {
                throw .invalidArgument("field '\(field)' has more than one transform in one write")
            }
            let place = "transform of \(field)"
            let transform: FieldTransform
            switch proto.transformType {
            case nil:
                throw .invalidArgument("\(place) names no transform")
            case .setToServerValue(let server)?:
                guard server == .requestTime else { throw .invalidArgument("\(place): unknown server value") }
                transform = .serverTimestamp
            case .increment(let v)?: transform = .increment(try number(v, place))
            case .maximum(let v)?: transform = .maximum(try number(v, place))
            case .minimum(let v)?: transform = .minimum(try number(v, place))
            case .appendMissingElements(let a)?:
                transform = .arrayUnion(try a.values.enumerated().map { k, v throws(HearthError) in try value(v, field: "\(place)[\(k)]") })
            case .removeAllFromArray(let a)?:
                transform = .arrayRemove(try a.values.enumerated().map { k, v throws(HearthError) in try value(v, field: "\(place)[\(k)]") })
            }
            out.append(FieldTransformEntry(field: field, transform: transform))
        }
        return out
    }

    func number(_ proto: Google_Firestore_V1_Value, _ place: String) throws(HearthError) -> Value {
        let v = try value(proto, field: place)
        guard v.isNumber else { throw .invalidArgument("\(place) needs an integer or a double operand, got \(v.typeName)") }
        return v
    }

    /// A commit's write results as Firestore sends them.
    func proto(_ result: CommitResult) -> (results: [Google_Firestore_V1_WriteResult], commitTime: Google_Protobuf_Timestamp) {
        let results = result.writeResults.map { write in
            var out = Google_Firestore_V1_WriteResult()
            // A delete (or a write that left no document) has no update time, as in Firestore.
            if let updateTime = write.updateTime { out.updateTime = Self.proto(updateTime) }
            out.transformResults = write.transformResults.map(proto)
            return out
        }
        return (results, Self.proto(result.commitTime))
    }
}
