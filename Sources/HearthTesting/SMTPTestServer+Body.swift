import Foundation

extension SMTPTestServer.Received {
    /// Everything after the headers with quoted-printable undone (soft line breaks joined, `=XX` decoded):
    /// the text part, then the HTML part of a `multipart/alternative` message.
    public var decodedBody: String {
        guard let start = data.range(of: "\r\n\r\n")?.upperBound else { return "" }
        let joined = data[start...].replacingOccurrences(of: "=\r\n", with: "")
        var bytes: [UInt8] = []
        var utf8 = Array(joined.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "="), utf8.count >= 2,
               let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16) {
                bytes.append(value)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The first `/auth/action` link of the message (the text part's, so no HTML escaping to undo).
    public var actionLink: String? {
        guard let range = decodedBody.range(of: #"https?://[^\s"<>]+/auth/action\?[^\s"<>]+"#, options: .regularExpression)
        else { return nil }
        return String(decodedBody[range])
    }
}
