import HearthCore
import NIOSSL

/// Certificate authorities trusted besides the system's (a private CA, a test server's), read from a PEM file
/// when the setting is applied, so that a missing or empty file stops the start and names the setting.
public enum TrustedCertificates {
    public static func read(caFile path: String, setting: String) throws(HearthError) -> [NIOSSLCertificate] {
        let certificates: [NIOSSLCertificate]
        do {
            certificates = try NIOSSLCertificate.fromPEMFile(path)
        } catch {
            throw .invalidArgument("\(setting): cannot read certificates from \(path): \(error)")
        }
        guard !certificates.isEmpty else { throw .invalidArgument("\(setting): \(path) holds no PEM certificate") }
        return certificates
    }
}
