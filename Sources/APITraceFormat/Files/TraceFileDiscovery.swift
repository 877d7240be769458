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
        for path in paths {
            // The name's bytes, not FileManager's UTF-8: a path that is not UTF-8 is found too.
            var info = stat()
            guard FileSystemPath.withBytes(of: path, { stat($0, &info) }) == 0 else {
                found.warnings.append(.init(path: path, kind: .unreadable("no such file or folder"), eventsKept: 0))
                continue
            }
            guard (info.st_mode & S_IFMT) == S_IFDIR else {
                if let refusal = RegularFile.check(path) {
                    found.warnings.append(.init(path: path, kind: .unreadable(refusal.reason), eventsKept: 0))
                } else {
                    found.files.append(path)
                }
                continue
            }
            var inFolder: [String] = []
            var skipped: [(String, String)] = []
            guard walk(path.hasSuffix("/") ? String(path.dropLast()) : path, into: &inFolder, skipped: &skipped) else {
                found.warnings.append(.init(path: path, kind: .unreadable("cannot list the folder"), eventsKept: 0))
                continue
            }
            let prefix = path.hasSuffix("/") ? path : path + "/"
            found.files.append(contentsOf: inFolder.sorted().map { prefix + $0 })
            for (name, reason) in skipped.sorted(by: { $0.0 < $1.0 }) {
                found.warnings.append(.init(path: prefix + name, kind: .unreadable(reason), eventsKept: 0))
            }
        }
        return found
    }

    /// Adds the trace files under `folder` (paths relative to it) to `out`, descending into
    /// subfolders but not through links to folders; false when `folder` itself cannot be listed.
    /// `readdir` rather than `FileManager`'s enumerator: it costs a tenth, and a report of a warm
    /// cache over a week's files spends most of its time finding them. Folders wait on a list, not
    /// the call stack, so a hostile depth of nesting cannot overflow it.
    ///
    /// A trace-named entry that is not a regular file (a FIFO, a socket, a device, a symbolic link:
    /// one to `/dev/zero` would read for ever) goes to `skipped` with what it is. Names are read
    /// as bytes (``FileSystemPath``), so a name that is not UTF-8 is found and opened again.
    private static func walk(_ folder: String, into out: inout [String], skipped: inout [(String, String)]) -> Bool {
        var pending = [(path: folder, relative: "")]
        var first = true
        while let (path, relative) = pending.popLast() {
            guard let directory = FileSystemPath.withBytes(of: path, { opendir($0) }) else {
                if first { return false }
                continue
            }
            first = false
            defer { closedir(directory) }
            while let entry = readdir(directory) {
                let name = withUnsafePointer(to: &entry.pointee.d_name) {
                    FileSystemPath.string(fromCString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
                }
                guard name != ".", name != ".." else { continue }
                var type = Int32(entry.pointee.d_type)
                if type == Int32(DT_UNKNOWN) {
                    var info = stat()
                    let status = FileSystemPath.withBytes(of: path + "/" + name) { lstat($0, &info) }
                    type = status != 0 ? Int32(DT_UNKNOWN) : (info.st_mode & S_IFMT) == S_IFDIR ? Int32(DT_DIR)
                        : (info.st_mode & S_IFMT) == S_IFREG ? Int32(DT_REG) : Int32(DT_FIFO)
                }
                if type == Int32(DT_DIR) {
                    pending.append((path + "/" + name, relative + name + "/"))
                } else if !name.hasPrefix("."), extensions.contains(where: { name.hasSuffix($0) }) {
                    if type == Int32(DT_REG) {
                        out.append(relative + name)
                    } else if let refusal = RegularFile.check(path + "/" + name) {
                        skipped.append((relative + name, refusal.reason))
                    } else {
                        out.append(relative + name)
                    }
                }
            }
        }
        return true
    }
}
