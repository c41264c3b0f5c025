// swift-tools-version:6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    // A module's members are visible only where it is imported, so every import (and product) is declared.
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "hearth",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "hearth", targets: ["hearth"]),
        .library(name: "HearthTesting", targets: ["HearthTesting"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.81.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.25.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-protobuf.git", from: "1.39.0"),
        .package(url: "https://github.com/grpc/grpc-swift-2.git", from: "2.4.3"),
        .package(url: "https://github.com/grpc/grpc-swift-protobuf.git", from: "2.4.1"),
    ],
    targets: [
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CArgon2", path: "Sources/CArgon2", pkgConfig: "libargon2",
                       providers: [.apt(["libargon2-dev"])]),
        .target(name: "CSQLiteWAL", dependencies: ["CSQLite"]),
        .target(name: "HearthCore", swiftSettings: swiftSettings),
        .target(name: "HearthRules", dependencies: ["HearthCore"], swiftSettings: swiftSettings),
        .target(name: "HearthSQLite", dependencies: ["CSQLite", "CSQLiteWAL"], swiftSettings: swiftSettings),
        .target(name: "HearthStore", dependencies: [
            "HearthCore", "HearthSQLite", "CSQLite",
            .product(name: "Logging", package: "swift-log"),
        ], swiftSettings: swiftSettings),
        .target(name: "HearthAuth", dependencies: [
            "HearthCore", "HearthSQLite", "CArgon2",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "Logging", package: "swift-log"),
        ], swiftSettings: swiftSettings),
        // Outgoing email: the message format and an SMTP client (no maintained Swift SMTP package fits).
        .target(name: "HearthMail", dependencies: [
            "HearthCore",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
        ], swiftSettings: swiftSettings),
        .target(name: "HearthEngine", dependencies: [
            "HearthCore", "HearthRules", "HearthStore", "HearthAuth",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "UnixSignals", package: "swift-service-lifecycle"),
        ], swiftSettings: swiftSettings),
        .target(name: "HearthServer", dependencies: [
            "HearthCore", "HearthRules", "HearthAuth", "HearthEngine", "HearthMail",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdCore", package: "hummingbird"),
            .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Prometheus", package: "swift-prometheus"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOWebSocket", package: "swift-nio"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
        ], swiftSettings: swiftSettings),
        // Firestore's v1 API as generated code; `protos/generate.sh` regenerates it from `protos/`.
        .target(name: "HearthFirestoreProtos", dependencies: [
            .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            .product(name: "GRPCCore", package: "grpc-swift-2"),
            .product(name: "GRPCProtobuf", package: "grpc-swift-protobuf"),
        ], swiftSettings: swiftSettings),
        .target(name: "HearthTesting", dependencies: [
            "HearthCore", "HearthRules", "HearthAuth", "HearthEngine", "HearthServer", "HearthMail",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdTesting", package: "hummingbird"),
            .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOWebSocket", package: "swift-nio"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
        ], swiftSettings: swiftSettings),
        .executableTarget(name: "hearth", dependencies: [
            "HearthCore", "HearthRules", "HearthStore", "HearthAuth", "HearthEngine", "HearthServer", "HearthMail",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ], swiftSettings: swiftSettings),
        .executableTarget(name: "hearth-listen-bench", dependencies: [
            "HearthCore", "HearthTesting",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
        ], path: "bench/ListenBench",
                          swiftSettings: swiftSettings),
        .testTarget(name: "HearthCoreTests", dependencies: ["HearthCore", "HearthTesting"], swiftSettings: swiftSettings),
        .testTarget(name: "HearthRulesTests", dependencies: ["HearthCore", "HearthRules", "HearthTesting"], exclude: ["Golden"],
                    swiftSettings: swiftSettings),
        .testTarget(name: "HearthStoreTests", dependencies: ["HearthCore", "CSQLite", "HearthSQLite", "HearthStore", "HearthTesting"],
                    swiftSettings: swiftSettings),
        // The store opens the file the accounts' SQLite storage runs on.
        .testTarget(name: "HearthAuthTests", dependencies: ["HearthCore", "HearthStore", "HearthAuth", "HearthTesting"],
                    swiftSettings: swiftSettings),
        .testTarget(name: "HearthMailTests", dependencies: [
            "HearthCore", "HearthMail", "HearthTesting",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOEmbedded", package: "swift-nio"),
        ],
                    swiftSettings: swiftSettings),
        .testTarget(name: "HearthFirestoreProtosTests", dependencies: [
            "HearthFirestoreProtos",
            .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            .product(name: "GRPCCore", package: "grpc-swift-2"),
        ], swiftSettings: swiftSettings),
        .testTarget(name: "HearthEngineTests", dependencies: [
            "HearthCore", "HearthRules", "HearthStore", "HearthAuth", "HearthEngine", "HearthTesting",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ], swiftSettings: swiftSettings),
        .testTarget(name: "HearthServerTests", dependencies: [
            "HearthCore", "HearthAuth", "HearthStore", "HearthEngine", "HearthServer", "HearthMail", "HearthTesting",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
        ], swiftSettings: swiftSettings),
    ]
)
