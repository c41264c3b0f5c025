import Foundation
import HearthCore
import HearthImages
import HearthServer
import HearthTesting
import HTTPTypes
import Testing

/// `?thumb=WxH` over loopback: the thumbnail is served like any download (its own type and ETag, conditional
/// requests, ranges, HEAD, download links), it is a read of the object under the rules, and a bad size, a
/// non-image or a decompression bomb gets a 400 that says which.
@Suite struct FileThumbnailTests {
    @Test func aThumbnailIsServedLikeADownload() async throws {
        try await TestServer.with { _, client in
            let image = TestImages.make(.jpeg, width: 400, height: 200)
            let put = try await FileAPITests.put(client, "pics/cat.jpg", image, type: "image/jpeg")
            #expect(put.status == 201)
            let etag = try #require(put.json?["etag"]?.stringValue)
            let thumb = try await client.get("/v1/files/pics/cat.jpg?thumb=100x100")
            #expect(thumb.status == 200, "\(thumb.text)")
            #expect(thumb.header("Content-Type") == "image/jpeg")
            #expect(thumb.header("ETag") == "\"\(etag)-100x100\"")
            #expect(thumb.header("Content-Length") == String(thumb.body.count))
            #expect(TestImages.describe(thumb.body).map { [$0.width, $0.height] } == [100, 50])
            // The same again: the kept copy, byte for byte.
            let again = try await client.get("/v1/files/pics/cat.jpg?thumb=100x100")
            #expect(again.body == thumb.body)

            let head = try await client.request(.head, "/v1/files/pics/cat.jpg?thumb=100x100")
            #expect(head.status == 200 && head.body.isEmpty)
            #expect(head.header("Content-Length") == thumb.header("Content-Length"))
            let notModified = try await client.get("/v1/files/pics/cat.jpg?thumb=100x100", headers: ["If-None-Match": "\"\(etag)-100x100\""])
            #expect(notModified.status == 304)
            // The object's own ETag names the object's bytes, not the thumbnail's.
            #expect(try await client.get("/v1/files/pics/cat.jpg?thumb=100x100", headers: ["If-None-Match": "\"\(etag)\""]).status == 200)
            let part = try await client.get("/v1/files/pics/cat.jpg?thumb=100x100", headers: ["Range": "bytes=0-9"])
            #expect(part.status == 206)
            #expect(part.body == Array(thumb.body.prefix(10)))
            #expect(part.header("Content-Range") == "bytes 0-9/\(thumb.body.count)")
            let attachment = try await client.get("/v1/files/pics/cat.jpg?thumb=100x100&download=1")
            #expect(attachment.header("Content-Disposition")?.hasPrefix("attachment; filename=\"cat.jpg\"") == true)

            // A replacement gets a thumbnail of its own bytes, under a new ETag.
            let replaced = try await FileAPITests.put(client, "pics/cat.jpg", TestImages.make(.png, width: 100, height: 400), type: "image/png")
            let fresh = try await client.get("/v1/files/pics/cat.jpg?thumb=100x100")
            #expect(fresh.header("Content-Type") == "image/png")
            #expect(fresh.header("ETag") == "\"\(replaced.json?["etag"]?.stringValue ?? "")-100x100\"")
            #expect(TestImages.describe(fresh.body).map { [$0.width, $0.height] } == [25, 100])
            #expect(try await client.delete("/v1/files/pics/cat.jpg").status == 204)
            #expect(try await client.get("/v1/files/pics/cat.jpg?thumb=100x100").status == 404)
        }
    }

    @Test func aThumbnailIsAReadUnderTheRules() async throws {
        let rules = try RulesHTTPTests.writeRules(FileAPITests.closedRules)
        try await TestServer.with(configure: { $0.rulesFile = rules; $0.useTestAccounts() }) { server, admin in
            let ann = try await admin.signedUp("ann@example.com", "correct horse battery")
            let path = "/v1/files/users/\(ann.uid)/me.png"
            let put = try await admin.request(.put, path, body: TestImages.make(.png, width: 20, height: 20), contentType: "image/png")
            #expect(put.status == 201, "\(put.text)")
            let token = try #require(put.json?["downloadToken"]?.stringValue)
            let client = server.client(as: .nobody)
            defer { Task { await client.close() } }
            let denied = try await client.get(path + "?thumb=10x10", as: .nobody)
            #expect(denied.status == 403)
            #expect(denied.errorCode == "permission-denied")
            #expect(try await client.get(path + "?thumb=10x10", as: .token(ann.token)).status == 200)
            let encoded = token.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let byLink = try await client.get(path + "?thumb=10x10&token=\(encoded)", as: .nobody)
            #expect(byLink.status == 200)
            #expect(byLink.header("Content-Type") == "image/png")
            // A token of no object, or another object's, opens nothing.
            #expect(try await client.get(path + "?thumb=10x10&token=hdt_wrong", as: .nobody).status == 403)
        }
    }

    struct BadThumb: Sendable, CustomTestStringConvertible {
        let query: String
        var path = "pics/a.png"
        /// Words the error message must hold.
        let mentions: String
        var testDescription: String { "\(path)?\(query)" }
    }

    static let badThumbs: [BadThumb] = [
        BadThumb(query: "thumb=0x0", mentions: "thumb width must be 1 to 2048 pixels, got 0"),
        BadThumb(query: "thumb=100x0", mentions: "thumb height must be 1 to 2048 pixels, got 0"),
        BadThumb(query: "thumb=abc", mentions: "thumb must be WIDTHxHEIGHT"),
        BadThumb(query: "thumb=100", mentions: "thumb must be WIDTHxHEIGHT"),
        BadThumb(query: "thumb=", mentions: "thumb must be WIDTHxHEIGHT"),
        BadThumb(query: "thumb=100000x1", mentions: "thumb width must be 1 to 2048 pixels, got 100000"),
        BadThumb(query: "thumb=1x2049", mentions: "thumb height must be 1 to 2048 pixels, got 2049"),
        BadThumb(query: "thumb=99999999999999999999x1", mentions: "thumb width must be 1 to 2048"),
        BadThumb(query: "thumb=-5x10", mentions: "thumb width '-5' is not a whole number"),
        BadThumb(query: "thumb=10xten", mentions: "thumb height 'ten' is not a whole number"),
        BadThumb(query: "thumb=10x10x10", mentions: "thumb height '10x10' is not a whole number"),
        BadThumb(query: "thumb=%2010x10", mentions: "thumb width ' 10' is not a whole number"),
        BadThumb(query: "thumb=10X10", mentions: "thumb must be WIDTHxHEIGHT"),
        BadThumb(query: "thumb=10x10&alt=json", mentions: "cannot be combined"),
        BadThumb(query: "thumb=10x10", path: "notes/a.txt", mentions: "file notes/a.txt is not an image"),
        BadThumb(query: "thumb=10x10", path: "notes/fake.png", mentions: "file notes/fake.png is not an image"),
        BadThumb(query: "thumb=10x10", path: "pics/bomb.png", mentions: "100000x100000 pixels"),
    ]

    @Test func badSizesNonImagesAndBombsAre400() async throws {
        try await TestServer.with { _, client in
            let image = TestImages.make(.png, width: 30, height: 30)
            #expect(try await FileAPITests.put(client, "pics/a.png", image, type: "image/png").status == 201)
            _ = try await FileAPITests.put(client, "notes/a.txt", Array("plain text".utf8), type: "text/plain")
            // Declared an image, but the bytes decide.
            _ = try await FileAPITests.put(client, "notes/fake.png", Array("plain text".utf8), type: "image/png")
            _ = try await FileAPITests.put(client, "pics/bomb.png", TestImages.pngBomb(width: 100_000, height: 100_000), type: "image/png")
            for c in Self.badThumbs {
                let r = try await client.get("/v1/files/\(c.path)?\(c.query)")
                #expect(r.status == 400, "\(c.testDescription): \(r.text)")
                #expect(r.errorCode == "invalid-argument", "\(c.testDescription)")
                #expect(r.errorMessage?.contains(c.mentions) == true, "\(c.testDescription): \(r.text)")
            }
            // Nothing changed: the object is whole and no thumbnail was kept.
            #expect(try await client.get("/v1/files/pics/a.png").body == image)
        }
    }
}
