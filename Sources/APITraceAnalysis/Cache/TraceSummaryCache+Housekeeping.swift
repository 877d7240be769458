import APITraceFormat
import Foundation

// Keeping the cache folder small: merging packs and evicting the oldest entries.

extension TraceSummaryCache {
    /// Merges the folder's packs into one when there are more than ``maximumPacks`` of them or
    /// they hold more than `maximumBytes`: each trace file keeps only its newest entry, and past
    /// the bound the oldest-written entries are dropped until the pack holds at most 80 % of it
    /// (so the next runs do not each evict a few). Returns how many entries were dropped for size.
    ///
    /// Entries are copied as they are, each decoded and checked against its index record first,
    /// and merged into the new pack's merged summary. Only
    /// the packs listed here are removed afterwards: a pack another run renames into place
    /// meanwhile is kept, and a run still reading a removed pack keeps its open descriptor. Also
    /// removes entries of the old one-file-per-entry format and temporary packs abandoned for an hour.
    static func compactIfNeeded(directory: String, maximumBytes: Int64) -> Int {
        let listing = SummaryPack.list(directory)
        for path in listing.legacyEntries + listing.abandoned { unlink(path) }
        let opened = listing.packs.map { (path: $0, pack: SummaryPack.Opened(path: $0)) }
        let total = opened.reduce(Int64(0)) { $0 + ($1.pack?.size ?? FileStatus(path: $1.path)?.size ?? 0) }
        guard listing.packs.count > maximumPacks || total > maximumBytes else { return 0 }

        // Newest entry of each key, newest first.
        var seen = Set<UInt64>()
        var newest: [(pack: SummaryPack.Opened, record: SummaryPack.Record)] = []
        for case let pack? in opened.reversed().map(\.pack) {
            for record in pack.records.reversed() where seen.insert(record.key).inserted {
                newest.append((pack, record))
            }
        }
        let overhead = Int64(SummaryPack.headerBytes + SummaryPack.footerBytes)
        let goal = total > maximumBytes ? maximumBytes / 5 * 4 : maximumBytes
        var kept = 0
        var bytes = overhead
        for item in newest {
            let size = Int64(item.record.length + SummaryPack.recordBytes)
            guard bytes + size <= goal else { break }
            bytes += size
            kept += 1
        }
        var evicted = newest.count - kept
        if kept > 0 {
            guard let writer = SummaryPack.Writer(directory: directory) else { return 0 }
            // The merged pack gets a merged summary too, so unfiltered runs keep skipping its
            // entries: the merge of exactly the entries copied, when they share one granularity.
            let granularity = newest[0].record.granularity
            var merged: TraceSummary? = TraceSummary(timeSeriesGranularity: granularity)
            // Oldest first, so a later eviction drops them in the order they were written.
            for (pack, record) in newest[..<kept].reversed() {
                guard let entry = pack.read(record),
                      let parsed = entry.withUnsafeBytes(parse), parsed.status == record.status,
                      parsed.granularity == record.granularity, key(parsed.absolutePath) == record.key else {
                    evicted += 1
                    continue
                }
                writer.append(entry, key: record.key, status: record.status, granularity: record.granularity)
                if record.granularity == granularity { merged?.merge(parsed.entry.summary) } else { merged = nil }
            }
            // Nothing appended (every entry was damaged) still removes the old packs; a failed write keeps them.
            // The merged summary is kept only while the pack stays within the goal with it.
            let mergedBytes = merged.map(encodeMerged).flatMap { bytes in
                writer.entryBytes + Int64(bytes.count + kept * SummaryPack.recordBytes) + overhead <= goal ? bytes : nil
            }
            guard writer.finish(merged: mergedBytes) != nil || writer.entryBytes == 0 else { return 0 }
        }
        for path in listing.packs { unlink(path) }
        return evicted
    }

    /// What the folder's packs hold: packs, entries (counted in their indexes) and bytes.
    package func contents() -> (packs: Int, entries: Int, bytes: Int64) {
        let packs = SummaryPack.list(directory).packs.compactMap(SummaryPack.Opened.init(path:))
        return (packs.count, packs.reduce(0) { $0 + $1.records.count }, packs.reduce(0) { $0 + $1.size })
    }
}
