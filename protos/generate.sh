#!/usr/bin/env bash
# Regenerates Sources/HearthFirestoreProtos from the .proto files beside this script. The generated code
# is committed, so a build never runs this; run it after changing a .proto file.
#
# Needs protoc (Debian: `apt-get install protobuf-compiler`, which brings the google/protobuf well-known
# types under /usr/include) and two plugins, built from the same package versions as Package.swift uses:
#   protoc-gen-swift         swift-protobuf 1.39.0
#   protoc-gen-grpc-swift-2  grpc-swift-protobuf 2.4.1
# Build them in a scratch package outside the repository, for example:
#   mkdir -p /tmp/protoc-plugins/Dummy && cd /tmp/protoc-plugins && touch Dummy/Dummy.swift
#   cat > Package.swift <<'SWIFT'
#   // swift-tools-version:6.1
#   import PackageDescription
#   let package = Package(name: "protoc-plugins", dependencies: [
#       .package(url: "https://github.com/apple/swift-protobuf.git", exact: "1.39.0"),
#       .package(url: "https://github.com/grpc/grpc-swift-protobuf.git", exact: "2.4.1"),
#   ], targets: [.target(name: "Dummy", path: "Dummy")])
#   SWIFT
#   swift build -c release --product protoc-gen-swift
#   swift build -c release --product protoc-gen-grpc-swift-2
# then run this script with PLUGIN_DIR=/tmp/protoc-plugins/.build/release (the default).
#
# Messages get `package` access (HearthFirestoreProtos is used by Hearth's own modules only); the
# Firestore service gets both server and client stubs (the client for tests).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
out="$root/Sources/HearthFirestoreProtos"
plugins="${PLUGIN_DIR:-/tmp/protoc-plugins/.build/release}"

for tool in protoc "$plugins/protoc-gen-swift" "$plugins/protoc-gen-grpc-swift-2"; do
    command -v "$tool" >/dev/null || { echo "generate.sh: $tool not found (see the header)" >&2; exit 1; }
done

cd "$here"
protos=$(find google -name '*.proto' | sort)
services=$(grep -l '^service ' $protos)

rm -f "$out"/*.pb.swift "$out"/*.grpc.swift
mkdir -p "$out"
protoc -I. \
    --plugin=protoc-gen-swift="$plugins/protoc-gen-swift" \
    --swift_out="$out" \
    --swift_opt=Visibility=Package,FileNaming=PathToUnderscores \
    $protos
protoc -I. \
    --plugin=protoc-gen-grpc-swift="$plugins/protoc-gen-grpc-swift-2" \
    --grpc-swift_out="$out" \
    --grpc-swift_opt=Visibility=Package,FileNaming=PathToUnderscores,Server=true,Client=true \
    $services
echo "generated: $(ls "$out" | grep -c 'pb.swift$') message files, $(ls "$out" | grep -c 'grpc.swift$') service files in $out"
