import Foundation

/// A fixture file written in a temporary folder of its own, beside the files its `files` entries name.
public enum FixtureFolder {
    /// Writes `text` as `fixture.json` and each of `files` (relative name → bytes) in a new folder; answers
    /// the fixture file's path. Remove the folder with `remove(_:)`.
    public static func write(_ text: String, files: [String: [UInt8]] = [:]) throws -> String {
        let folder = TestFolders.make()
        for (name, bytes) in files {
            let path = folder + "/" + name
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        }
        try text.write(toFile: folder + "/fixture.json", atomically: true, encoding: .utf8)
        return folder + "/fixture.json"
    }

    /// Removes the folder of a fixture file `write` made.
    public static func remove(_ file: String) {
        try? FileManager.default.removeItem(atPath: (file as NSString).deletingLastPathComponent)
    }
}
