import ArgumentParser
import Foundation
import HearthCore
import HearthServer

/// `hearth indexes`: check an index file.
struct Indexes: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check an index file (composite indexes and single-field overrides).",
        subcommands: [Check.self]
    )

    /// `hearth indexes check FILE`: reads the file as `hearth serve --indexes` does and prints what it keeps.
    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check an index file in Firestore's firestore.indexes.json format; prints the indexes and overrides it defines, or the first mistake with its place, and exits non-zero on a mistake.")

        @Argument(help: "The index file.") var file: String

        func run() throws {
            let (indexes, overrides): ([CompositeIndex], [FieldOverride])
            do {
                (indexes, overrides) = try loadIndexFile(file)
            } catch {
                FileHandle.standardError.write(Data("\(error.message)\n".utf8))
                throw ExitCode.failure
            }
            print("\(file): OK (\(indexes.count) composite \(indexes.count == 1 ? "index" : "indexes"), "
                  + "\(overrides.count) field \(overrides.count == 1 ? "override" : "overrides"))")
            for index in indexes { print("  index \(index)") }
            for o in overrides {
                let kept: String
                switch (o.indexing.values, o.indexing.contains) {
                case (false, false): kept = "not indexed"
                case (true, false): kept = "values only (no array-contains)"
                case (false, true): kept = "array elements only (array-contains, no ==, ranges or ordering)"
                case (true, true): kept = "values and array elements"
                }
                print("  override \(o.collectionGroup), field \(o.field) and its subfields: \(kept)")
            }
        }
    }
}
