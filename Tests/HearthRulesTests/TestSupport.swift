import HearthCore
import HearthRules

/// A lookup over a fixed set of documents, counting reads.
struct FixtureLookup: RulesDocumentLookup {
    var before: [DocumentPath: [String: Value]]
    var after: [DocumentPath: [String: Value]]

    init(_ before: [String: [String: Value]] = [:], after: [String: [String: Value]]? = nil) {
        func convert(_ m: [String: [String: Value]]) -> [DocumentPath: [String: Value]] {
            Dictionary(uniqueKeysWithValues: m.map { (DocumentPath(uncheckedSegments: $0.key.split(separator: "/").map(String.init)), $0.value) })
        }
        self.before = convert(before)
        self.after = convert(after ?? before)
    }

    func get(_ path: DocumentPath) throws -> Document? {
        before[path].map { Document(path: path, fields: $0, createTime: testTime, updateTime: testTime) }
    }

    func getAfter(_ path: DocumentPath) throws -> Document? {
        after[path].map { Document(path: path, fields: $0, createTime: testTime, updateTime: testTime) }
    }
}

/// 2026-11-22T10:00:00Z.
let testTime = Timestamp(rfc3339: "2026-11-22T10:00:00Z")!

func doc(_ path: String, _ fields: [String: Value]) -> Document {
    Document(path: DocumentPath(uncheckedSegments: path.split(separator: "/").map(String.init)), fields: fields,
             createTime: testTime, updateTime: testTime)
}

func docPath(_ path: String) -> DocumentPath {
    DocumentPath(uncheckedSegments: path.split(separator: "/").map(String.init))
}

func compile(_ source: String, file: String = "test.rules") throws -> RulesProgram {
    try RulesProgram.compile(source: source, fileName: file)
}

/// Wraps statements in the usual service and database match.
func rules(_ body: String, version: Int = 2) -> String {
    """
    rules_version = '\(version)';
    service cloud.firestore {
      match /databases/{database}/documents {
    \(body)
      }
    }
    """
}
