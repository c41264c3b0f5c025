import HearthCore
import HearthRules

/// Storage rules on every file operation (docs/rules.md, Storage rules): the admin key bypasses them; every
/// other caller is decided by the `service firebase.storage` block of the program in force, and denied when
/// there is none.
extension Database {
    /// The program that decides this caller's file operations, or nil for the admin.
    func enforcedStorageProgram(for identity: Identity) throws(HearthError) -> RulesProgram? {
        if identity.isAdmin { return nil }
        guard let program = rules.program, program.servesStorage else {
            throw rules.dev
                ? .permissionDenied("Missing or insufficient permissions: the rules have no service firebase.storage block, so only the admin key may touch files.")
                : .permissionDenied()
        }
        return program
    }

    /// Decides one file operation: `resource` is the stored object (nil when missing, and on create),
    /// `request.resource` the object after the write.
    func authorizeFile(_ method: RulesMethod, name: String, resource: StoredFile?, requestResource: StoredFile?,
                       time: Timestamp, identity: Identity, program: RulesProgram,
                       lookup: any RulesDocumentLookup) throws(HearthError) {
        let request = StorageRulesRequest(method: method, name: name, auth: RulesAuth(identity), time: time,
                                          resource: method == .create ? nil : resource.map(Self.storageObject),
                                          requestResource: requestResource.map(Self.storageObject))
        try enforce(program.evaluateStorage(request, lookup: lookup), method, "file \(name)")
    }

    /// An object as storage rules see it.
    static func storageObject(_ file: StoredFile) -> StorageObject {
        StorageObject(name: file.path.name, size: file.size, contentType: file.contentType,
                      md5Hash: Base64.encode(file.md5), timeCreated: file.createTime, updated: file.updateTime,
                      generation: file.generation, metageneration: file.metageneration, etag: file.etag,
                      metadata: file.metadata)
    }
}
