import CArgon2
import HearthCore

/// Hashes and verifies passwords with Argon2id (the system's libargon2), storing PHC strings.
///
/// The async API runs every hash on a `HashingPool`, so a burst of logins queues on a few dedicated threads
/// (bounded memory, bounded queue) instead of blocking the cooperative pool or an event loop.
public struct PasswordHasher: Sendable {
    /// Argon2id cost parameters for new hashes.
    public struct Configuration: Sendable, Hashable {
        /// Memory cost in KiB; the default is OWASP's minimum for Argon2id (19 MiB).
        public var memoryKiB: UInt32
        /// Number of passes.
        public var iterations: UInt32
        /// Lanes (and threads libargon2 uses per hash).
        public var parallelism: UInt32
        /// Salt length in bytes.
        public var saltLength: Int
        /// Hash length in bytes.
        public var hashLength: Int

        /// OWASP's recommended minimum by default: m=19456 KiB, t=2, p=1, 16-byte salt, 32-byte hash.
        public init(memoryKiB: UInt32 = 19_456, iterations: UInt32 = 2, parallelism: UInt32 = 1,
                    saltLength: Int = 16, hashLength: Int = 32) {
            self.memoryKiB = memoryKiB
            self.iterations = iterations
            self.parallelism = parallelism
            self.saltLength = saltLength
            self.hashLength = hashLength
        }

        /// Checks the parameters against Argon2's rules and `AuthLimits`.
        public func validate() throws(HearthError) {
            guard (1...AuthLimits.maxArgon2Parallelism).contains(parallelism) else {
                throw .invalidArgument("Argon2 parallelism must be between 1 and \(AuthLimits.maxArgon2Parallelism)")
            }
            guard (1...AuthLimits.maxArgon2Iterations).contains(iterations) else {
                throw .invalidArgument("Argon2 iterations must be between 1 and \(AuthLimits.maxArgon2Iterations)")
            }
            guard memoryKiB >= 8 * parallelism, memoryKiB <= AuthLimits.maxArgon2MemoryKiB else {
                throw .invalidArgument(
                    "Argon2 memory must be between 8×parallelism and \(AuthLimits.maxArgon2MemoryKiB) KiB")
            }
            guard (8...64).contains(saltLength), (16...64).contains(hashLength) else {
                throw .invalidArgument("Argon2 salt must be 8…64 bytes and hash 16…64 bytes")
            }
        }
    }

    /// Parameters for new hashes.
    public let configuration: Configuration
    /// Where hashing runs.
    public let pool: HashingPool

    /// Makes a hasher; the parameters are checked once here.
    public init(configuration: Configuration = Configuration(), pool: HashingPool = .shared) throws(HearthError) {
        try configuration.validate()
        self.configuration = configuration
        self.pool = pool
    }

    /// Hashes a password with a fresh random salt, on the pool; answers the PHC string.
    public func hash(_ password: String) async throws(HearthError) -> String {
        let configuration = self.configuration
        let salt = Tokens.randomBytes(configuration.saltLength)
        let result = try await pool.run { () -> Result<String, HearthError> in
            Result { () throws(HearthError) in
                try PasswordHasher.hashNow(password, salt: salt, configuration: configuration).text
            }
        }
        return try result.get()
    }

    /// Verifies a password against a stored PHC string, on the pool, comparing in constant time.
    /// A malformed or out-of-bounds stored hash never matches.
    public func verify(_ password: String, against phc: String) async throws(HearthError) -> Bool {
        guard let stored = PHCString(phc) else { return false }
        let result = try await pool.run { () -> Result<Bool, HearthError> in
            Result { () throws(HearthError) in try PasswordHasher.verifyNow(password, against: stored) }
        }
        return try result.get()
    }

    /// True when a stored hash was made with other parameters than the current ones (or cannot be read),
    /// so the next successful login should re-hash the password.
    public func needsRehash(_ phc: String) -> Bool {
        guard let stored = PHCString(phc) else { return true }
        return stored.memoryKiB != configuration.memoryKiB || stored.iterations != configuration.iterations
            || stored.parallelism != configuration.parallelism || stored.salt.count != configuration.saltLength
            || stored.hash.count != configuration.hashLength
    }

    /// A well-formed hash of nothing in particular with the current parameters. Verifying any password
    /// against it costs exactly what a real verification costs, so a login for an unknown email takes as
    /// long as one with a wrong password.
    public func makeDummyHash() -> String {
        PHCString(memoryKiB: configuration.memoryKiB, iterations: configuration.iterations,
                  parallelism: configuration.parallelism, salt: Tokens.randomBytes(configuration.saltLength),
                  hash: Tokens.randomBytes(configuration.hashLength)).text
    }

    /// Hashes on the calling thread (blocking); for the pool, tools and known-answer tests.
    public static func hashNow(_ password: String, salt: [UInt8], configuration: Configuration)
        throws(HearthError) -> PHCString {
        let hash = try rawHash(Array(password.utf8), salt: salt, memoryKiB: configuration.memoryKiB,
                               iterations: configuration.iterations, parallelism: configuration.parallelism,
                               length: configuration.hashLength)
        return PHCString(memoryKiB: configuration.memoryKiB, iterations: configuration.iterations,
                         parallelism: configuration.parallelism, salt: salt, hash: hash)
    }

    /// Verifies on the calling thread (blocking).
    public static func verifyNow(_ password: String, against stored: PHCString) throws(HearthError) -> Bool {
        let candidate = try rawHash(Array(password.utf8), salt: stored.salt, memoryKiB: stored.memoryKiB,
                                    iterations: stored.iterations, parallelism: stored.parallelism,
                                    length: stored.hash.count)
        return ConstantTime.equals(candidate, stored.hash)
    }

    static func rawHash(_ password: [UInt8], salt: [UInt8], memoryKiB: UInt32, iterations: UInt32,
                        parallelism: UInt32, length: Int) throws(HearthError) -> [UInt8] {
        guard password.count <= AuthLimits.maxPasswordBytes else {
            throw .invalidArgument("password is longer than \(AuthLimits.maxPasswordBytes) bytes")
        }
        var output = [UInt8](repeating: 0, count: length)
        let status = password.withUnsafeBytes { pwd in
            salt.withUnsafeBytes { saltBytes in
                output.withUnsafeMutableBytes { out in
                    argon2_hash(iterations, memoryKiB, parallelism, pwd.baseAddress, pwd.count,
                                saltBytes.baseAddress, saltBytes.count, out.baseAddress, out.count,
                                nil, 0, Argon2_id, ARGON2_VERSION_13.rawValue)
                }
            }
        }
        guard status == ARGON2_OK.rawValue else {
            if status == ARGON2_MEMORY_ALLOCATION_ERROR.rawValue {
                throw .resourceExhausted("Not enough memory to check the password; try again shortly.", retryAfter: 1)
            }
            // libargon2's messages name parameters only, never the password.
            throw .internal("Password hashing failed.")
        }
        return output
    }
}
