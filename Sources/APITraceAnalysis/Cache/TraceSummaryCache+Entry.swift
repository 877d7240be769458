import APITraceFormat

// One section: the summary of one trace file and the key it was stored under, prefixed by a magic
// number, a format version, a checksum and a length, so a section is checked on its own (the store
// checks only its own layout: a bit flipped inside a summary would otherwise be read as a count).

extension TraceSummaryCache {
    /// `ATSC`; bump ``formatVersion`` whenever the summary or its encoding changes.
    static let magic: UInt32 = 0x4353_5441
    /// 2: entries live in packs (``SummaryPack``); version 1 was one file per entry.
    /// 3: summaries count `websocket` events (version 2 skipped them as an unknown type).
    /// 4: sections of ``FileCacheStore`` entries; the merged summary names the files it covers.
    static let formatVersion: UInt32 = 4
    /// Magic, version, checksum and length.
    static let prefixBytes = 24

    static func encode(_ entry: Entry, absolutePath: String, status: FileStatus, granularity: Int64) -> [UInt8] {
        var w = BinaryWriter(capacity: 16_384)
        w.put(magic); w.put(formatVersion); w.put(UInt64(0)); w.put(UInt64(0))
        w.put(absolutePath)
        w.put(status.size); w.put(status.modifiedNanoseconds); w.put(status.inode)
        w.put(granularity)
        switch entry.header {
        case .none: w.put(UInt8(0))
        case .some(.none): w.put(UInt8(1))
        case .some(.some(let version)): w.put(UInt8(2)); w.put(version)
        }
        entry.summary.encode(into: &w)
        return sealed(w)
    }

    static func decode(_ bytes: [UInt8], absolutePath: String, status: FileStatus, granularity: Int64) -> Entry? {
        bytes.withUnsafeBytes { decode($0, absolutePath: absolutePath, status: status, granularity: granularity) }
    }

    /// `w`'s bytes with the payload's checksum and length written into the prefix.
    private static func sealed(_ w: BinaryWriter) -> [UInt8] {
        var bytes = w.bytes
        let payload = bytes.count - prefixBytes
        let sum = bytes.withUnsafeBytes { checksum(UnsafeRawBufferPointer(rebasing: $0[prefixBytes...])) }
        withUnsafeBytes(of: sum.littleEndian) { bytes.replaceSubrange(8..<16, with: $0) }
        withUnsafeBytes(of: UInt64(payload).littleEndian) { bytes.replaceSubrange(16..<24, with: $0) }
        return bytes
    }

    /// The merged summary of a run and the files it covers (absolute path and status), prefixed
    /// like an entry.
    static func encodeMerged(_ summary: TraceSummary, granularity: Int64, covered: [String: FileStatus]) -> [UInt8] {
        var w = BinaryWriter(capacity: 65_536)
        w.put(magic); w.put(formatVersion); w.put(UInt64(0)); w.put(UInt64(0))
        w.put(granularity)
        w.putCount(covered.count)
        for (file, status) in covered.sorted(by: { $0.key < $1.key }) {
            w.put(file)
            w.put(status.size); w.put(status.modifiedNanoseconds); w.put(status.inode)
        }
        summary.encode(into: &w)
        return sealed(w)
    }

    /// The files a merged summary covers, without decoding the summary itself; nil when it is not whole.
    static func mergedCoverage(_ bytes: [UInt8]) -> [String: FileStatus]? {
        bytes.withUnsafeBytes { raw -> [String: FileStatus]? in
            guard isIntact(raw) else { return nil }
            var r = BinaryReader(raw)
            r.skip(prefixBytes)
            return try? coverage(&r)
        }
    }

    private static func coverage(_ r: inout BinaryReader) throws(BinaryReader.Invalid) -> [String: FileStatus] {
        _ = try r.get(Int64.self)
        // A path takes 4 bytes at least, a status 24.
        let count = try r.items(minimumSize: 28)
        var covered: [String: FileStatus] = [:]
        covered.reserveCapacity(count)
        for _ in 0..<count {
            let file = try r.string()
            covered[file] = FileStatus(size: try r.get(Int64.self), modifiedNanoseconds: try r.get(Int64.self), inode: try r.get(UInt64.self))
        }
        guard covered.count == count else { throw BinaryReader.Invalid() }
        return covered
    }

    /// What ``encodeMerged(_:granularity:covered:)`` wrote, decoded as hostile input; nil when it is not whole.
    static func decodeMerged(_ bytes: [UInt8]) -> (granularity: Int64, covered: [String: FileStatus], summary: TraceSummary)? {
        bytes.withUnsafeBytes { raw -> (granularity: Int64, covered: [String: FileStatus], summary: TraceSummary)? in
            guard isIntact(raw) else { return nil }
            var r = BinaryReader(raw)
            r.skip(prefixBytes)
            do throws(BinaryReader.Invalid) {
                var peek = r
                let granularity = try peek.get(Int64.self)
                let covered = try coverage(&r)
                let summary = try TraceSummary(decoding: &r)
                guard r.remaining == 0 else { return nil }
                return (granularity, covered, summary)
            } catch {
                return nil
            }
        }
    }

    /// True when `raw` is one whole entry of this format whose checksum matches.
    static func isIntact(_ raw: UnsafeRawBufferPointer) -> Bool {
        var r = BinaryReader(raw)
        do {
            guard try r.get(UInt32.self) == magic, try r.get(UInt32.self) == formatVersion else { return false }
            let sum = try r.get(UInt64.self), length = try r.get(UInt64.self)
            return length == UInt64(raw.count - prefixBytes)
                && checksum(UnsafeRawBufferPointer(rebasing: raw[prefixBytes...])) == sum
        } catch {
            return false
        }
    }

    static func decode(_ raw: UnsafeRawBufferPointer, absolutePath: String, status: FileStatus, granularity: Int64) -> Entry? {
        guard let parsed = parse(raw), parsed.absolutePath == absolutePath, parsed.status == status,
              parsed.granularity == granularity else { return nil }
        return parsed.entry
    }

    /// An entry and the key it was stored under, decoded as hostile input; nil when it is not a
    /// whole entry of this format.
    static func parse(_ raw: UnsafeRawBufferPointer) -> (absolutePath: String, status: FileStatus, granularity: Int64, entry: Entry)? {
        do {
            guard isIntact(raw) else { return nil }
            var r = BinaryReader(raw)
            r.skip(prefixBytes)
            let path = try r.string()
            let status = FileStatus(size: try r.get(Int64.self), modifiedNanoseconds: try r.get(Int64.self), inode: try r.get(UInt64.self))
            let granularity = try r.get(Int64.self)
            let header: String??
            switch try r.get(UInt8.self) {
            case 0: header = .none
            case 1: header = .some(.none)
            case 2: header = .some(try r.string())
            default: return nil
            }
            let summary = try TraceSummary(decoding: &r)
            guard r.remaining == 0 else { return nil }
            return (path, status, granularity, Entry(summary: summary, header: header))
        } catch {
            return nil
        }
    }

    /// A fast 64-bit checksum (four multiply-xor lanes over 8-byte words), to catch damaged and
    /// truncated entries; not a defence against a deliberate forger, which the bounded decoding is.
    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        let prime: UInt64 = 0x9E37_79B1_85EB_CA87
        var lanes: (UInt64, UInt64, UInt64, UInt64) = (1, 2, 3, 4)
        var i = 0
        let n = bytes.count
        while i + 32 <= n {
            lanes.0 = (lanes.0 ^ bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* prime
            lanes.1 = (lanes.1 ^ bytes.loadUnaligned(fromByteOffset: i + 8, as: UInt64.self)) &* prime
            lanes.2 = (lanes.2 ^ bytes.loadUnaligned(fromByteOffset: i + 16, as: UInt64.self)) &* prime
            lanes.3 = (lanes.3 ^ bytes.loadUnaligned(fromByteOffset: i + 24, as: UInt64.self)) &* prime
            lanes.0 ^= lanes.0 >> 29; lanes.1 ^= lanes.1 >> 29; lanes.2 ^= lanes.2 >> 29; lanes.3 ^= lanes.3 >> 29
            i += 32
        }
        var h = lanes.0 &+ (lanes.1 &* 31) &+ (lanes.2 &* 961) &+ (lanes.3 &* 29_791) &+ UInt64(n)
        while i < n {
            h = (h ^ UInt64(bytes[i])) &* prime
            i += 1
        }
        h ^= h >> 33
        h = h &* 0xff51_afd7_ed55_8ccd
        h ^= h >> 33
        return h
    }
}
