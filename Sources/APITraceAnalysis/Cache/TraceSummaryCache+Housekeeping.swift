import APITraceFormat
import Foundation

// What the cache folder holds besides the store: files of the cache's earlier layouts.

extension TraceSummaryCache {
    /// Removes files of the cache's earlier layouts from `directory`: packs (`*.pack`, one per run
    /// that stored entries), entries of the one-file-per-entry format (`*.summary`), and temporary
    /// packs left by runs that ended before renaming them. None of them is ever read or opened
    /// (`unlink` removes a FIFO or a link planted under such a name, never what it points to).
    static func removeLegacyFiles(in directory: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names where name.hasSuffix(".pack") || name.hasSuffix(".summary") || (name.hasPrefix(".") && name.hasSuffix(".pack.tmp"))
            || AtomicFileWriter.isTemporary(name, ofTargetsEndingIn: ".pack") {
            unlink(directory + "/" + name)
        }
    }

    /// What the cache file holds: entries (files with a summary) and bytes.
    package func contents() -> (entries: Int, bytes: Int64) {
        let path = directory + "/" + Self.fileName
        guard case .success(let bytes?) = RegularFile.read(path, limit: FileCacheStore.maximumBytes),
              let entries = FileCacheStore.decodeAll(bytes, client: Self.client) else { return (0, 0) }
        return (entries.keys.filter { $0 != Self.mergedKey }.count, Int64(bytes.count))
    }
}
