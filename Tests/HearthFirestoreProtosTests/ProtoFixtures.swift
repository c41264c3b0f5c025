import Foundation
import SwiftProtobuf

/// Helpers shared by the protobuf tests: the Python client's serialized messages and a check that a decoded
/// message left no field unknown.
enum ProtoFixtures {
    /// The hex lines `protos/fixtures/make_python_fixtures.py` wrote, by name.
    static let pythonClient: [String: [UInt8]] = {
        var root = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { root.deleteLastPathComponent() }  // Tests/HearthFirestoreProtosTests/ProtoFixtures.swift
        let file = root.appendingPathComponent("protos/fixtures/python-client.txt")
        guard let text = try? String(contentsOf: file, encoding: .utf8) else { return [:] }
        var out: [String: [UInt8]] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count == 2, let bytes = bytes(hex: parts[1]) else { continue }
            out[String(parts[0])] = bytes
        }
        return out
    }()

    struct Missing: Error, CustomStringConvertible {
        let name: String
        var description: String { "no fixture \(name) in protos/fixtures/python-client.txt" }
    }

    /// Decodes the fixture `name` as `M`.
    static func decode<M: SwiftProtobuf.Message>(_ name: String, as type: M.Type = M.self) throws -> M {
        guard let bytes = pythonClient[name] else { throw Missing(name: name) }
        return try M(serializedBytes: bytes)
    }

    /// The fields of `message`, at any depth, that the generated code did not know, as text format prints
    /// them (a field number where a name should be).
    static func unknownFields(in message: some SwiftProtobuf.Message) -> [String] {
        message.textFormatString().split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { $0.first?.isNumber == true }
    }

    static func bytes(hex: Substring) -> [UInt8]? {
        guard hex.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(hex.count / 2)
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            out.append(byte)
            index = next
        }
        return out
    }
}
