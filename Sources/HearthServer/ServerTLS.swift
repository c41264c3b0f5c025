import Foundation
import HearthCore
import Logging
import NIOCertificateReloading
import NIOConcurrencyHelpers
import NIOSSL

/// The certificate files HTTPS is served with (`--tls-cert`, `--tls-key`).
public struct TLSFiles: Sendable, Equatable {
    /// PEM: the server's certificate first, then any intermediates of its chain.
    public var certificate: String
    /// PEM: the certificate's private key.
    public var key: String

    /// Names the two files.
    public init(certificate: String, key: String) {
        self.certificate = certificate
        self.key = key
    }
}

/// The certificate files named in the configuration do not make a TLS server; the server does not start.
public struct TLSStartupError: Error, Sendable, CustomStringConvertible {
    /// Which file, and what is wrong with it.
    public let message: String
    public var description: String { message }
}

/// The certificate HTTPS connections, and the gRPC port's, are served with. A new connection takes the one in
/// force when it arrives; `reload` (on SIGHUP) reads the files again and swaps them in, so a renewed
/// certificate is served without a restart, while connections already open keep theirs.
final class ServerTLS: CertificateReloader {
    /// What one reading of the files made: the context of HTTPS connections, and the chain and key the gRPC
    /// transport takes through `sslContextConfigurationOverride`.
    struct Loaded: Sendable {
        let context: NIOSSLContext
        let chain: [NIOSSLCertificate]
        let key: NIOSSLPrivateKey
    }

    let files: TLSFiles
    private let current: NIOLockedValueBox<Loaded>

    /// Reads and checks the files; the error names the file at fault.
    init(files: TLSFiles) throws(TLSStartupError) {
        self.files = files
        current = NIOLockedValueBox(try Self.load(files))
    }

    /// The context for an HTTPS connection arriving now.
    var context: NIOSSLContext { current.withLockedValue { $0.context } }

    /// The certificate for a gRPC connection arriving now.
    var sslContextConfigurationOverride: NIOSSLContextConfigurationOverride {
        let loaded = current.withLockedValue { $0 }
        var override = NIOSSLContextConfigurationOverride()
        override.certificateChain = loaded.chain.map { .certificate($0) }
        override.privateKey = .privateKey(loaded.key)
        return override
    }

    /// Reads the files again; on success new connections get the new certificate. A file that does not load
    /// leaves the old one in force, and the log says why.
    func reload(reason: String, logger: Logger) {
        do {
            let loaded = try Self.load(files)
            current.withLockedValue { $0 = loaded }
            logger.notice("TLS certificate reloaded", metadata: ["file": "\(files.certificate)", "reason": "\(reason)"])
        } catch {
            logger.error("TLS certificate not reloaded; the previous certificate stays in force",
                         metadata: ["reason": "\(reason)", "error": "\(error.message)"])
        }
    }

    /// A server context for the files: TLS 1.2 at least, HTTP/1.1 offered by ALPN.
    static func load(_ files: TLSFiles) throws(TLSStartupError) -> Loaded {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMBytes(try read(files.certificate, what: "certificate"))
        } catch let error as TLSStartupError {
            throw error
        } catch {
            throw TLSStartupError(message: "TLS certificate file \(files.certificate) holds no PEM certificate that can be read (\(error))")
        }
        guard !chain.isEmpty else {
            throw TLSStartupError(message: "TLS certificate file \(files.certificate) holds no PEM certificate")
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(bytes: try read(files.key, what: "key"), format: .pem)
        } catch let error as TLSStartupError {
            throw error
        } catch {
            throw TLSStartupError(message: "TLS key file \(files.key) holds no PEM private key that can be read (\(error))")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) },
                                                                     privateKey: .privateKey(key))
        configuration.minimumTLSVersion = .tlsv12
        configuration.applicationProtocols = ["http/1.1"]
        do {
            return Loaded(context: try NIOSSLContext(configuration: configuration), chain: chain, key: key)
        } catch NIOSSLError.failedToLoadPrivateKey {
            // BoringSSL installs the key after the chain, and refuses one that is not the leaf certificate's.
            throw TLSStartupError(message: "TLS key file \(files.key) is not the key of the certificate in \(files.certificate)")
        } catch {
            throw TLSStartupError(message: "TLS certificate \(files.certificate) and key \(files.key) do not make a TLS server (\(error))")
        }
    }

    private static func read(_ path: String, what: String) throws(TLSStartupError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw TLSStartupError(message: "TLS \(what) file \(path) cannot be read")
        }
        return Array(data)
    }
}
