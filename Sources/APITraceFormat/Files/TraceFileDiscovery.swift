import Foundation

/// Finds trace files under the paths a user names.
package enum TraceFileDiscovery {
    /// The file name endings that hold traces.
    package static let extensions = [".jsonl.gz", ".jsonl"]

    /// What ``find(_:)`` found.
    package struct Found: Sendable {
        /// Trace files, sorted by path (file names sort by time).
        package var files: [String] = []
        /// Paths that do not exist or cannot be listed, with the reason.
        package var warnings: [TraceReadWarning] = []
    }

    /// Expands files and folders (recursively) into trace files.
    ///
    /// A file named explicitly is kept whatever its name; inside folders only `.jsonl.gz` and
    /// `.jsonl` files are taken, and hidden files (such as a writer's temporary files) are skipped.
    package static func find(_ paths: [String]) -> Found {
        var found = Found()
        let fm = FileManager.default
        for path in paths {
            var isDirectory: ObjCBool = false
            guard fm.fileExists(atPath: path, isDirectory: &isDirectory) else {
                found.warnings.append(.init(path: path, kind: .unreadable("no such file or folder"), eventsKept: 0))
                continue
            }
            guard isDirectory.boolValue else {
                found.files.append(path)
                continue
            }
            guard let walker = fm.enumerator(atPath: path) else {
                found.warnings.append(.init(path: path, kind: .unreadable("cannot list the folder"), eventsKept: 0))
                continue
            }
            var inFolder: [String] = []
            while let relative = walker.nextObject() as? String {
                let name = (relative as NSString).lastPathComponent
                guard !name.hasPrefix("."), extensions.contains(where: { name.hasSuffix($0) }) else { continue }
                inFolder.append(path.hasSuffix("/") ? path + relative : path + "/" + relative)
            }
            found.files.append(contentsOf: inFolder.sorted())
        }
        return found
    }
}
