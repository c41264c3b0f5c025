import HearthCore
import HearthMail
import NIOSSL

/// How events are delivered to function endpoints (`FunctionDeliveryService`).
public struct FunctionsSettings: Sendable {
    /// Retries of a failed attempt: 5 s doubling to at most an hour, ±20 %, until the event is 24 hours old.
    public var retry = RetryPolicy(initialDelay: .seconds(5), multiplier: 2, maxDelay: .seconds(3600), jitter: 0.2,
                                   maxAttempts: .max, maxAge: .seconds(86_400))
    /// How long an endpoint may take to answer before the attempt counts as failed.
    public var timeout: Duration = .seconds(30)
    /// Attempts in flight at once to one endpoint.
    public var concurrencyPerEndpoint = 8
    /// Due events read at once (the service holds no more than this many beyond those in flight).
    public var pageSize = 64
    /// Longest wait between two looks for due events (a commit that queues events wakes the service at once).
    public var pollInterval: Duration = .seconds(1)
    /// How long the token an event carries for its endpoint's identity works (tokens are reused while at
    /// least half of it is left).
    public var identityTokenLifetime: Duration = .seconds(300)
    /// Largest answer body read from an endpoint.
    public var maxAnswerBytes = 10 * 1024 * 1024
    /// Certificate authorities trusted for endpoints' TLS besides the system's.
    public var trustRoots: [NIOSSLCertificate] = []
    /// Makes the default settings.
    public init() {}

    /// Trusts the certificate authorities in a PEM file besides the system's (endpoints behind a private CA).
    public mutating func trust(caFile path: String) throws(HearthError) {
        trustRoots += try TrustedCertificates.read(caFile: path, setting: "functionsCaFile")
    }
}
