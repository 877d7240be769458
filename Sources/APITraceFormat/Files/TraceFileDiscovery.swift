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
            var inFolder: [String] = []
            guard walk(path.hasSuffix("/") ? String(path.dropLast()) : path, into: &inFolder) else {
                found.warnings.append(.init(path: path, kind: .unreadable("cannot list the folder"), eventsKept: 0))
                continue
            }
            found.files.append(contentsOf: inFolder.sorted().map { (path.hasSuffix("/") ? path : path + "/") + $0 })
        }
        return found
    }

    /// Adds the trace files under `folder` (paths relative to it) to `out`, descending into
    /// subfolders but not through links to folders; false when `folder` itself cannot be listed.
    /// `readdir` rather than `FileManager`'s enumerator: it costs a tenth, and a report of a warm
    /// cache over a week's files spends most of its time finding them. Folders wait on a list, not
    /// the call stack, so a hostile depth of nesting cannot overflow it.
    private static func walk(_ folder: String, into out: inout [String]) -> Bool {
        var pending = [(path: folder, relative: "")]
        var first = true
        while let (path, relative) = pending.popLast() {
            guard let directory = opendir(path) else {
                if first { return false }
                continue
            }
            first = false
            defer { closedir(directory) }
            while let entry = readdir(directory) {
                let name = withUnsafePointer(to: &entry.pointee.d_name) {
                    String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
                }
                guard name != ".", name != ".." else { continue }
                var isFolder = Int32(entry.pointee.d_type) == Int32(DT_DIR)
                if Int32(entry.pointee.d_type) == Int32(DT_UNKNOWN) {
                    var info = stat()
                    isFolder = lstat(path + "/" + name, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
                }
                if isFolder {
                    pending.append((path + "/" + name, relative + name + "/"))
                } else if !name.hasPrefix("."), extensions.contains(where: { name.hasSuffix($0) }) {
                    out.append(relative + name)
                }
            }
        }
        return true
    }
}
