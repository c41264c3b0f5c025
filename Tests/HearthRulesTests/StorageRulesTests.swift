import HearthCore
import HearthRules
import Testing

/// `service firebase.storage` on the shared evaluator: Firebase's examples (size limits, content types,
/// owner-only paths, membership documents read with `firestore.get`), the `{path=**}` wildcard over object
/// names, and a file with both services.
@Suite struct StorageRulesTests {
    static let source = """
        rules_version = '2';
        function signedIn() { return request.auth != null; }
        service firebase.storage {
          match /b/{bucket}/o {
            match /images/{imageId} {
              allow read;
              // Firebase's example: images under 5 MB, of an image type.
              allow write: if request.resource.size < 5 * 1024 * 1024
                           && request.resource.contentType.matches('image/.*');
            }
            match /users/{userId}/{allPaths=**} {
              allow read, write: if signedIn() && request.auth.uid == userId;
            }
            match /groups/{groupId}/{file} {
              allow read: if firestore.exists(/databases/(default)/documents/groups/$(groupId)/members/$(request.auth.uid));
              allow create: if firestore.get(/databases/(default)/documents/groups/$(groupId)).data.open == true
                            && request.resource.metadata.owner == request.auth.uid;
              allow delete: if resource.metadata.owner == request.auth.uid;
              allow update: if resource.size == request.resource.size && resource.bucket == bucket;
            }
            match /public/{path=**} {
              allow list: if true;
            }
            match /dated/{file} {
              allow get: if resource.timeCreated < request.time && resource.generation > 0
                         && resource.md5Hash == 'rL0Y20zC+Fzt72VPzMSk2A==' && resource.name == 'dated/' + file;
              allow create: if resource == null && request.path == /b/default/o/dated/$(file);
            }
            match /plain/{file} {
              allow read: if get(/databases/(default)/documents/x/y) != null;
            }
          }
        }
        service cloud.firestore {
          match /databases/{database}/documents {
            match /notes/{id} { allow read: if signedIn(); }
            match /docs/{id} { allow read: if firestore.exists(/databases/(default)/documents/docs/$(id)); }
          }
        }
        """

    static let lookup = FixtureLookup([
        "groups/g1": ["open": .bool(true)],
        "groups/g1/members/alice": ["role": .string("member")],
        "groups/g2": ["open": .bool(false)],
    ])

    static func object(_ name: String, size: Int64 = 100, contentType: String = "image/png",
                       metadata: [String: String] = [:]) -> StorageObject {
        StorageObject(name: name, size: size, contentType: contentType, md5Hash: "rL0Y20zC+Fzt72VPzMSk2A==",
                      timeCreated: Timestamp(microseconds: testTime.microseconds - 1_000_000), updated: testTime,
                      generation: 7, metageneration: 1, etag: "7-1", metadata: metadata)
    }

    struct Row: CustomTestStringConvertible, Sendable {
        let name: String
        let method: RulesMethod
        let path: String
        let uid: String?
        let resource: StorageObject?
        var after: StorageObject? = nil
        let allowed: Bool
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        Row(name: "small image", method: .create, path: "images/a.png", uid: nil, resource: nil,
            after: object("images/a.png", size: 1_000), allowed: true),
        Row(name: "image of exactly 5 MB", method: .create, path: "images/a.png", uid: nil, resource: nil,
            after: object("images/a.png", size: 5 * 1024 * 1024), allowed: false),
        Row(name: "text file where images are", method: .create, path: "images/a.txt", uid: nil, resource: nil,
            after: object("images/a.txt", contentType: "text/plain"), allowed: false),
        Row(name: "content type merely containing image/", method: .create, path: "images/a", uid: nil, resource: nil,
            after: object("images/a", contentType: "text/image/png"), allowed: false),
        Row(name: "one segment only for {imageId}", method: .create, path: "images/x/a.png", uid: nil, resource: nil,
            after: object("images/x/a.png"), allowed: false),
        Row(name: "anyone reads images", method: .get, path: "images/a.png", uid: nil,
            resource: object("images/a.png"), allowed: true),
        Row(name: "owner writes deep under their folder", method: .create, path: "users/alice/a/b/c.txt", uid: "alice",
            resource: nil, after: object("users/alice/a/b/c.txt"), allowed: true),
        Row(name: "another user writes there", method: .create, path: "users/alice/c.txt", uid: "bob", resource: nil,
            after: object("users/alice/c.txt"), allowed: false),
        Row(name: "guest reads a user's file", method: .get, path: "users/alice/c.txt", uid: nil,
            resource: object("users/alice/c.txt"), allowed: false),
        Row(name: "owner lists their folder ({allPaths=**} matches no segment)", method: .list, path: "users/alice/",
            uid: "alice", resource: nil, after: nil, allowed: true),
        Row(name: "another user lists it", method: .list, path: "users/alice/", uid: "bob", resource: nil, after: nil,
            allowed: false),
        Row(name: "owner deletes", method: .delete, path: "users/alice/x", uid: "alice", resource: object("users/alice/x"),
            allowed: true),
        Row(name: "member reads a group file", method: .get, path: "groups/g1/f.jpg", uid: "alice",
            resource: object("groups/g1/f.jpg"), allowed: true),
        Row(name: "non-member reads it", method: .get, path: "groups/g1/f.jpg", uid: "bob",
            resource: object("groups/g1/f.jpg"), allowed: false),
        Row(name: "upload to an open group with owner metadata", method: .create, path: "groups/g1/f.jpg", uid: "bob",
            resource: nil, after: object("groups/g1/f.jpg", metadata: ["owner": "bob"]), allowed: true),
        Row(name: "upload with someone else as owner", method: .create, path: "groups/g1/f.jpg", uid: "bob",
            resource: nil, after: object("groups/g1/f.jpg", metadata: ["owner": "alice"]), allowed: false),
        Row(name: "upload to a closed group", method: .create, path: "groups/g2/f.jpg", uid: "bob", resource: nil,
            after: object("groups/g2/f.jpg", metadata: ["owner": "bob"]), allowed: false),
        Row(name: "upload to a group with no document", method: .create, path: "groups/g3/f.jpg", uid: "bob",
            resource: nil, after: object("groups/g3/f.jpg", metadata: ["owner": "bob"]), allowed: false),
        Row(name: "owner in the stored metadata deletes", method: .delete, path: "groups/g1/f.jpg", uid: "bob",
            resource: object("groups/g1/f.jpg", metadata: ["owner": "bob"]), allowed: true),
        Row(name: "delete of a file without metadata.owner", method: .delete, path: "groups/g1/f.jpg", uid: "bob",
            resource: object("groups/g1/f.jpg"), allowed: false),
        Row(name: "update keeping the size, bucket wildcard bound", method: .update, path: "groups/g1/f.jpg", uid: nil,
            resource: object("groups/g1/f.jpg"), after: object("groups/g1/f.jpg"), allowed: true),
        Row(name: "update changing the size", method: .update, path: "groups/g1/f.jpg", uid: nil,
            resource: object("groups/g1/f.jpg"), after: object("groups/g1/f.jpg", size: 101), allowed: false),
        Row(name: "list of a public prefix", method: .list, path: "public/", uid: nil, resource: nil, after: nil,
            allowed: true),
        Row(name: "list of a public sub-prefix", method: .list, path: "public/a/b", uid: nil, resource: nil, after: nil,
            allowed: true),
        Row(name: "list of the root", method: .list, path: "", uid: nil, resource: nil, after: nil, allowed: false),
        Row(name: "get of a public file (only list is allowed)", method: .get, path: "public/a", uid: nil,
            resource: object("public/a"), allowed: false),
        Row(name: "resource fields: timeCreated, generation, md5Hash, name", method: .get, path: "dated/f", uid: nil,
            resource: object("dated/f"), allowed: true),
        Row(name: "create sees resource null and request.path", method: .create, path: "dated/f", uid: nil, resource: nil,
            after: object("dated/f"), allowed: true),
        Row(name: "get() is not available in storage rules", method: .get, path: "plain/f", uid: "alice",
            resource: object("plain/f"), allowed: false),
        Row(name: "no rule matches", method: .get, path: "elsewhere/f", uid: "alice", resource: object("elsewhere/f"),
            allowed: false),
    ]

    @Test(arguments: rows) func decides(_ row: Row) throws {
        let program = try compile(Self.source)
        let request = StorageRulesRequest(method: row.method, name: row.path, auth: row.uid.map { RulesAuth(uid: $0) },
                                          time: testTime, resource: row.resource, requestResource: row.after)
        #expect(program.evaluateStorage(request, lookup: Self.lookup).isAllowed == row.allowed)
    }

    @Test func bothServicesInOneFile() throws {
        let program = try compile(Self.source)
        #expect(program.servesStorage && program.servesFirestore)
        // The top-level function serves both services.
        let note = RulesRequest(method: .get, path: docPath("notes/n1"), auth: RulesAuth(uid: "alice"), time: testTime)
        #expect(program.evaluate(note, lookup: Self.lookup).isAllowed)
        // `firestore.exists` is for storage rules: in Firestore rules it is an error, which denies.
        let denied = RulesRequest(method: .get, path: docPath("docs/d1"), time: testTime)
        #expect(!program.evaluate(denied, lookup: FixtureLookup(["docs/d1": [:]])).isAllowed)
        // A storage path is not a document path: the Firestore service's matches never see it.
        let file = StorageRulesRequest(method: .get, name: "notes/n1", auth: RulesAuth(uid: "alice"), time: testTime,
                                       resource: Self.object("notes/n1"))
        #expect(!program.evaluateStorage(file, lookup: Self.lookup).isAllowed)
    }

    @Test func oneServiceAlone() throws {
        let storageOnly = try compile("""
            rules_version = '2';
            service firebase.storage { match /b/{bucket}/o { match /{all=**} { allow read: if true; } } }
            """)
        #expect(storageOnly.servesStorage && !storageOnly.servesFirestore)
        let get = StorageRulesRequest(method: .get, name: "a/b", time: testTime, resource: Self.object("a/b"))
        #expect(storageOnly.evaluateStorage(get, lookup: Self.lookup).isAllowed)
        #expect(!storageOnly.evaluate(RulesRequest(method: .get, path: docPath("a/b"), time: testTime),
                                      lookup: Self.lookup).isAllowed)
        // Listing takes rules_version 2, as in Firebase.
        let version1 = try compile("""
            service firebase.storage { match /b/{bucket}/o { match /{all=**} { allow read: if true; } } }
            """)
        #expect(version1.evaluateStorage(get, lookup: Self.lookup).isAllowed)
        #expect(!version1.evaluateStorage(StorageRulesRequest(method: .list, name: "a/", time: testTime),
                                          lookup: Self.lookup).isAllowed)
        let firestoreOnly = try compile(rules("match /{doc=**} { allow read: if true; }"))
        #expect(!firestoreOnly.servesStorage && firestoreOnly.servesFirestore)
        #expect(!firestoreOnly.evaluateStorage(get, lookup: Self.lookup).isAllowed)
    }

    @Test(arguments: [
        ("service firebase.storage { match /b/{bucket}/o { } }\nservice firebase.storage { }", "service 'firebase.storage' is already declared on line 1"),
        ("service firebase.database { }", "unsupported service 'firebase.database'"),
        ("service firebase.storage { match /b/{bucket}/o { match /a { allow read: if firestore.get(1, 2); } } }", "'firestore.get' takes 1 argument"),
        ("service firebase.storage { match /b/{bucket}/o { match /a { allow upload: if true; } } }", "unknown method 'upload'"),
    ])
    func compileErrors(_ source: String, _ message: String) {
        #expect {
            _ = try compile(source)
        } throws: { error in
            "\(error)".contains(message)
        }
    }
}
