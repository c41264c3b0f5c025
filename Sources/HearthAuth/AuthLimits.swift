/// Hard limits of the accounts module, in one place. Configurable policies live in the `Configuration`
/// structs; these bound what any configuration may allow, so hostile input stays cheap to reject.
public enum AuthLimits {
    /// Longest email address accepted, in UTF-8 bytes (RFC 5321's path limit).
    public static let maxEmailBytes = 254
    /// Longest local part (before `@`) of an email address, in UTF-8 bytes.
    public static let maxEmailLocalBytes = 64
    /// Longest password accepted whatever the policy says, in UTF-8 bytes; keeps Argon2's input bounded.
    public static let maxPasswordBytes = 1_024
    /// Longest display name, in characters.
    public static let maxDisplayNameLength = 256
    /// Longest display name, in UTF-8 bytes: a character may hold any number of combining marks, so the
    /// count of characters alone would not bound what every token of the account carries.
    public static let maxDisplayNameBytes = 1_024
    /// Longest uid, in UTF-8 bytes (Firebase Auth's limit).
    public static let maxUIDBytes = 128
    /// Largest custom-claims map, as compact JSON bytes (Firebase Auth's limit).
    public static let maxClaimsBytes = 1_000
    /// Claim names that custom claims may not use: the token's own fields (Firebase Auth's reserved list,
    /// plus the claims Hearth sets itself).
    public static let reservedClaims: Set<String> = [
        "acr", "amr", "at_hash", "aud", "auth_time", "azp", "cnf", "c_hash", "exp", "iat", "iss", "jti",
        "nbf", "nonce", "sub", "user_id", "firebase", "email", "email_verified", "name",
    ]
    /// Largest Argon2 memory cost a stored hash may name, in KiB; a hash asking for more is refused
    /// rather than allowed to allocate without bound.
    public static let maxArgon2MemoryKiB: UInt32 = 1_048_576
    /// Largest Argon2 iteration count a stored hash may name.
    public static let maxArgon2Iterations: UInt32 = 64
    /// Largest Argon2 parallelism a stored hash may name.
    public static let maxArgon2Parallelism: UInt32 = 16
    /// Largest page of users an admin listing returns.
    public static let maxUserPageSize = 1_000
    /// Most distinct keys a throttle remembers before it forgets the stalest ones.
    public static let maxThrottleEntries = 100_000
}
