/// What a one-time code from a link is, read without spending it (the pages behind the links show a form
/// for a code that still works, and say why one does not).
public enum OneTimeCodeState: Sendable, Equatable {
    /// Not a code Hearth issues for this purpose (cut short, mistyped, or another kind).
    case malformed
    /// Well formed but not stored: forged, already used, or replaced by a newer link. Hearth keeps no
    /// trace of a spent code, so these read the same.
    case unknown
    /// Stored, but past its expiry.
    case expired
    /// Works: for the account with this email address.
    case valid(email: String)
}
