@testable import HearthAuth
import HearthCore
import Testing

/// A display name is bounded in characters and in bytes: one character may carry any number of combining
/// marks, and every token of the account carries the name.
@Suite struct DisplayNameTests {
    static let rows: [(String, Bool)] = [
        (String(repeating: "a", count: 256), true),
        (String(repeating: "a", count: 257), false),
        (String(repeating: "é", count: 256), true),                               // 512 bytes
        (String(repeating: "a" + String(repeating: "\u{301}", count: 8), count: 256), false),  // 256 characters, 4,352 bytes
        ("a" + String(repeating: "\u{301}", count: 8_000), false),                 // one character of 16,001 bytes
        (String(repeating: "😀", count: 256), true),                              // 1,024 bytes
    ]

    @Test(arguments: rows.indices)
    func displayNamesAreBoundedInCharactersAndBytes(_ row: Int) {
        let (name, accepted) = Self.rows[row]
        let outcome = Result { () throws(HearthError) in try AuthService.checkDisplayName(name) }
        if accepted {
            #expect((try? outcome.get()) == name, "\(name.count) characters, \(name.utf8.count) bytes")
        } else {
            guard case .failure(let error) = outcome else {
                Issue.record("\(name.count) characters, \(name.utf8.count) bytes: accepted")
                return
            }
            #expect(error.code == .invalidArgument && error.message.contains("displayName"))
        }
    }
}
