import Foundation

/// The Python that runs the peers under `Tests/peers`: `HEARTH_PEER_PYTHON`, else `.build/peers-venv` (made
/// by `Tests/peers/install.sh`), else `python3`, whichever first has the module; a missing module is an error
/// that says how to install it, never a skipped test.
enum PeerPython {
    /// `package` is the module's name on PyPI, when it differs.
    static func find(module: String, package: String? = nil, purpose: String) throws -> String {
        var candidates: [String] = []
        if let configured = ProcessInfo.processInfo.environment["HEARTH_PEER_PYTHON"] { candidates.append(configured) }
        candidates += [Harness.projectFile(".build/peers-venv/bin/python"), "/usr/bin/python3"]
        for candidate in candidates where FileManager.default.isExecutableFile(atPath: candidate) {
            let probe = try ChildProcess(path: candidate, arguments: ["-c", "import \(module)"])
            if probe.waitUntilExit() == 0 { return candidate }
        }
        throw ServerProcessError(message: """
            \(purpose): run `bash Tests/peers/install.sh` (it makes .build/peers-venv) or `pip install \(package ?? module)`, \
            or set HEARTH_PEER_PYTHON to a Python that has it
            """)
    }
}
