// libFuzzer entry for the wire formats: any bytes given to the JSON reader, the typed value decoder, the
// query and aggregation parsers and the index key decoder must be accepted or refused with an error, never
// crash; and every value that decodes must encode to bytes that decode to the same encoding. Built and run by
// fuzz/run.sh.
import HearthCore

@_cdecl("LLVMFuzzerTestOneInput")
public func jsonFuzzInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size <= 64 * 1024 else { return 0 }
    let bytes = UnsafeBufferPointer(start: data, count: size)
    _ = IndexKey.decodeSegments(Array(bytes))
    guard let json = try? JSON.parse(bytes) else { return 0 }
    _ = json.serialized()
    if let value = try? Value(wire: json) {
        let encoded = value.wireBytes
        guard let again = try? Value(wireText: String(decoding: encoded, as: UTF8.self)) else {
            preconditionFailure("an encoded value does not decode: \(String(decoding: encoded, as: UTF8.self))")
        }
        precondition(again.wireBytes == encoded, "encoding is not stable: \(String(decoding: encoded, as: UTF8.self))")
        _ = IndexKey.encode(value)
        _ = IndexKey.encodeDescending(value)
    }
    if let fields = try? Value.decodeFields(json) {
        let encoded = Value.encodeFields(fields)
        guard let parsed = try? JSON.parse(encoded), let again = try? Value.decodeFields(parsed) else {
            preconditionFailure("encoded fields do not decode: \(String(decoding: encoded, as: UTF8.self))")
        }
        precondition(Value.encodeFields(again) == encoded, "field encoding is not stable")
    }
    if let query = try? Query(json: json) { _ = query }
    if let aggregate = try? AggregateQuery(json: json) { _ = aggregate }
    return 0
}
