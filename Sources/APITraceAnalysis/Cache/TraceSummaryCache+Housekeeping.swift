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
        for name in names where isLegacyName(name) {
            unlink(directory + "/" + name)
        }
    }

    /// Whether `name` is one the earlier layouts gave their files (`<16 hex>.summary`,
    /// `<16 hex>-<pid>-<random>.pack`, and such a pack's temporary names): a `--cache-dir` may be a
    /// folder that also holds a user's own `notes.pack`, which is left alone.
    static func isLegacyName(_ name: String) -> Bool {
        func isHex16(_ text: Substring) -> Bool {
            text.utf8.count == 16 && text.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }
        }
        func isPack(_ stem: Substring) -> Bool {
            let parts = stem.split(separator: "-", omittingEmptySubsequences: false)
            return parts.count == 3 && isHex16(parts[0]) && parts.dropFirst().allSatisfy { !$0.isEmpty && $0.utf8.allSatisfy { $0 >= 48 && $0 <= 57 } }
        }
        if name.hasSuffix(".summary") { return isHex16(name.dropLast(".summary".count)) }
        if name.hasSuffix(".pack") { return isPack(name.dropLast(".pack".count)) }
        // Temporary packs: `.<pack>.pack.tmp` and AtomicFileWriter's `.<pack>.pack.<tag>.tmp`.
        guard name.hasPrefix("."), AtomicFileWriter.isTemporary(name, ofTargetsEndingIn: ".pack") || name.hasSuffix(".pack.tmp"),
              let end = name.range(of: ".pack.") else { return false }
        return isPack(name[name.index(after: name.startIndex)..<end.lowerBound])
    }

    /// What the cache file holds: entries (files with a summary) and bytes.
    package func contents() -> (entries: Int, bytes: Int64) {
        let path = directory + "/" + Self.fileName
        guard case .success(let bytes?) = RegularFile.read(path, limit: FileCacheStore.maximumBytes),
              let entries = FileCacheStore.decodeAll(bytes, client: Self.client) else { return (0, 0) }
        return (entries.keys.filter { $0 != Self.mergedKey }.count, Int64(bytes.count))
    }
}
