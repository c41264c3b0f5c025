import Foundation
import HearthCore

/// The folders tests make: all under one folder per test process, removed when the process exits, so a run
/// leaves nothing behind however many servers and stores its tests opened. A run that was killed cannot remove
/// its own; the next run removes the folders of processes that no longer exist.
public enum TestFolders {
    private static let prefix = "hearth-tests-"

    private static let root: String = {
        sweepAbandoned()
        let root = NSTemporaryDirectory() + prefix + String(getpid())
        try? FileManager.default.removeItem(atPath: root)
        try? FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: TestFolders.root) }
        return root
    }()

    /// A fresh path named `name-…` inside this process's folder; nothing is created there.
    public static func path(_ name: String) -> String {
        root + "/" + name + "-" + makeAutoID()
    }

    /// A new, empty folder named `name-…` inside this process's folder.
    public static func make(_ name: String = "hearth-test") -> String {
        let folder = path(name)
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    /// Removes the folders of earlier test processes that have ended.
    private static func sweepAbandoned() {
        let temporary = NSTemporaryDirectory()
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? [] where entry.hasPrefix(prefix) {
            guard let pid = pid_t(entry.dropFirst(prefix.count)), kill(pid, 0) != 0, errno == ESRCH else { continue }
            try? FileManager.default.removeItem(atPath: temporary + entry)
        }
    }
}
