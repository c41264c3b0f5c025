/// Every bound of the rules language, in one place: Firestore's published limits where it has one,
/// and guards against hostile input (deep nesting, huge sources, pathological regexes) where it has not.
public enum RulesLimits {
    /// Largest rules source accepted, in UTF-8 bytes (Firestore: 256 KiB).
    public static let maxSourceBytes = 256 * 1024
    /// Deepest expression tree (nesting of operators, calls, indexing and literals) the parser builds.
    public static let maxExpressionDepth = 64
    /// Deepest nesting of `match` blocks.
    public static let maxMatchDepth = 32
    /// Most segments in one `match` pattern.
    public static let maxPatternSegments = 100
    /// Most diagnostics reported for one file before the parser stops.
    public static let maxDiagnostics = 50
    /// Most `let` bindings in one function (Firestore: 10).
    public static let maxLetBindings = 10
    /// Most parameters of one function.
    public static let maxFunctionParameters = 7
    /// Deepest chain of function calls during one evaluation (Firestore: 20).
    public static let maxCallDepth = 20
    /// Most expressions evaluated for one request (Firestore: 1,000).
    public static let maxExpressionsEvaluated = 1_000
    /// Most distinct `get`/`exists`/`getAfter`/`existsAfter` documents for a single-document request or a query.
    public static let maxAccessCallsSingle = 10
    /// Most distinct access calls shared by all writes of a batch or transaction.
    public static let maxAccessCallsBatch = 20
    /// Most ways one request path may bind the `match` tree (recursive wildcards can split a path many ways).
    public static let maxMatchBindings = 256
    /// Longest regular expression accepted by `matches`, `split` and `replace`, in bytes.
    public static let maxRegexBytes = 1_024
    /// Most compiled regex instructions (bounded repetition `{n,m}` expands the program).
    public static let maxRegexProgram = 4_096
    /// Largest count in a regex repetition `{n,m}`.
    public static let maxRegexRepeat = 1_000
    /// Deepest nesting of regex groups.
    public static let maxRegexNesting = 100
    /// Most regex engine steps for one request, across every `matches`, `split` and `replace`.
    public static let maxRegexSteps = 2_000_000
    /// Longest string, list, map or set a built-in may produce (guards memory on `+`, `concat`, `split`, ...).
    public static let maxCollectionSize = 100_000
    /// Longest string a built-in may produce, in UTF-8 bytes.
    public static let maxStringBytes = 1_048_576
    /// The database id rules see in `/databases/{database}/documents`.
    public static let databaseID = "(default)"
    /// The one bucket storage rules see in `/b/{bucket}/o`.
    public static let bucketID = "default"
}
