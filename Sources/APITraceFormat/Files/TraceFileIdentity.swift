import Foundation

/// What a trace file's name says about it: who wrote it, when it started, and whether and when it ends.
///
/// One type for every name apitrace writes, so every reader prunes and caches by the same rule
/// (``TraceFileSelection``):
///
/// ```text
/// 20261122T100000Z-3f9a12c4-0001.jsonl.gz                       written: a writer's file, sequence 1
/// 20261122T100000Z-3f9a12c4-1b2c3d4e5f607182.jsonl.gz           stored: one upload (or a sealed file of unknown end)
/// 20261122T100000Z-3f9a12c4-20261122T110012Z-1b2c3d4e.jsonl.gz  sealed: the collector's file, events before 11:00:12
/// 20261122T100000Z-3f9a12c4-open.jsonl.gz                       open: the collector is appending to it
/// ```
///
/// Every time is in the events' clock (the producer's), never the clock of the machine that
/// stored the file. Names sort by time, so listing a folder in name order reads it in time order.
package struct TraceFileIdentity: Sendable, Equatable {
    /// What kind of file a name denotes.
    package enum Kind: Sendable, Equatable {
        /// A writer's file, the `sequence`-th of its producer's run: finished when its producer has
        /// started a later file, or when it is read-only and no writer holds its lock.
        case written(sequence: Int)
        /// A collector's immutable file named after (16 hex digits of) a digest: one upload as
        /// stored before the collector appended, or an appended file sealed without a known end.
        case stored(digest: String)
        /// A collector's immutable appended file holding events before `ended` (and the reading slack).
        case sealed(ended: TraceTimestamp, tag: String)
        /// A collector's file still being appended to.
        case open
    }

    /// When the file was started (the earliest header `started` it holds).
    package var started: TraceTimestamp
    /// Id of the producer.
    package var producer: String
    /// What the name says of the file's life.
    package var kind: Kind

    package init(started: TraceTimestamp, producer: String, kind: Kind) {
        self.started = started
        self.producer = producer
        self.kind = kind
    }

    /// A writer's file.
    package init(started: TraceTimestamp, producer: String, sequence: Int) {
        self.init(started: started, producer: producer, kind: .written(sequence: sequence))
    }

    /// The writer's sequence number, for a writer's file.
    package var sequence: Int? {
        if case .written(let sequence) = kind { return sequence }
        return nil
    }

    /// The end of the events' span the name gives (a sealed file), before the reading slack.
    package var ended: TraceTimestamp? {
        if case .sealed(let ended, _) = kind { return ended }
        return nil
    }

    /// True for files the collector never changes again once they carry their name.
    package var isFinishedByConstruction: Bool {
        switch kind {
        case .stored, .sealed: true
        case .written, .open: false
        }
    }

    /// The file name, e.g. `20261122T100000Z-3f9a12c4-0001.jsonl.gz`.
    package var fileName: String {
        let last: String
        switch kind {
        case .written(let sequence):
            let seq = String(sequence)
            last = String(repeating: "0", count: max(0, 4 - seq.count)) + seq
        case .stored(let digest): last = digest
        case .sealed(let ended, let tag): last = ended.basicISO8601 + "-" + tag
        case .open: last = Self.openMark
        }
        return "\(started.basicISO8601)-\(producer)-\(last).jsonl.gz"
    }

    /// The last part of an open file's name.
    package static let openMark = "open"
    /// Hex digits of a stored file's digest.
    package static let digestLength = 16
    /// Hex digits of a sealed file's tag.
    package static let tagLength = 8

    /// Parses a file name (a path's last component); `nil` when it follows none of the patterns.
    package init?(fileName: String) {
        // Bytes, not Substrings: every report and alert run parses the name of every file it finds.
        var utf8 = fileName.utf8[...]
        if let slash = utf8.lastIndex(of: UInt8(ascii: "/")) { utf8 = utf8[utf8.index(after: slash)...] }
        let name = Array(utf8)
        let stemCount: Int
        if name.count > 9, name.suffix(9).elementsEqual(".jsonl.gz".utf8) {
            stemCount = name.count - 9
        } else if name.count > 6, name.suffix(6).elementsEqual(".jsonl".utf8) {
            stemCount = name.count - 6
        } else {
            return nil
        }
        // <yyyyMMdd>T<HHmmss>Z-<producer>-<last>: the producer may hold dashes, the last part may not.
        guard stemCount >= 20, name[16] == UInt8(ascii: "-"),
              let started = Self.timestamp(name, at: 0),
              let lastDash = name[..<stemCount].lastIndex(of: UInt8(ascii: "-")), lastDash > 17, lastDash + 1 < stemCount
        else { return nil }
        let last = name[(lastDash + 1)..<stemCount]
        var producerEnd = lastDash
        let kind: Kind
        if last.elementsEqual(Self.openMark.utf8) {
            kind = .open
        } else if last.count == Self.digestLength, last.allSatisfy(Self.isLowerHex) {
            // 16 hex digits are a digest even when they are all decimal: writers count files in 4 digits.
            kind = .stored(digest: String(decoding: last, as: UTF8.self))
        } else if last.count == Self.tagLength, last.allSatisfy(Self.isLowerHex), lastDash - 17 > 17,
                  name[lastDash - 17] == UInt8(ascii: "-"), let ended = Self.timestamp(name, at: lastDash - 16) {
            kind = .sealed(ended: ended, tag: String(decoding: last, as: UTF8.self))
            producerEnd = lastDash - 17
        } else if last.allSatisfy(Self.isDigit), last.count <= 18 {
            var value = 0
            for byte in last { value = value * 10 + Int(byte - UInt8(ascii: "0")) }
            kind = .written(sequence: value)
        } else {
            return nil
        }
        guard producerEnd > 17 else { return nil }
        self.started = started
        self.producer = String(decoding: name[17..<producerEnd], as: UTF8.self)
        self.kind = kind
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
    private static func isLowerHex(_ byte: UInt8) -> Bool { isDigit(byte) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f")) }

    /// `yyyyMMddTHHmmssZ` at `offset`.
    private static func timestamp(_ name: [UInt8], at offset: Int) -> TraceTimestamp? {
        guard offset >= 0, offset + 16 <= name.count, name[offset + 8] == UInt8(ascii: "T"), name[offset + 15] == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in name[(offset + range.lowerBound)..<(offset + range.upperBound)] {
                guard isDigit(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let y = number(0..<4), let mo = number(4..<6), let d = number(6..<8),
              let h = number(9..<11), let mi = number(11..<13), let s = number(13..<15) else { return nil }
        let days = TraceTimestamp.daysFromCivil(year: y, month: mo, day: d)
        return TraceTimestamp(millisecondsSince1970: (days * 86_400 + Int64(h * 3600 + mi * 60 + s)) * 1000)
    }
}

extension TraceFileIdentity {
    /// The file an open collector file at `path` became when it was sealed (renamed) after a
    /// reader listed it: the sealed or stored file of the same producer and start in its folder.
    package static func sealedSuccessor(ofOpen path: String) -> String? {
        guard let identity = TraceFileIdentity(fileName: path), identity.kind == .open else { return nil }
        let folder = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        let prefix = identity.started.basicISO8601 + "-" + identity.producer + "-"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return nil }
        return names.sorted().first { name in
            name.hasPrefix(prefix) && TraceFileIdentity(fileName: name).map { $0.isFinishedByConstruction && $0.producer == identity.producer } == true
        }.map { folder + "/" + $0 }
    }
}

extension TraceFileIdentity {
    /// Largest producer journal read for ``committedLength(ofOpen:)``: a week of a busy producer's
    /// lines is a few megabytes; past this the journal is ignored (the whole open file is read).
    package static let maximumJournalBytes = 64 << 20

    /// For an open collector file (`<root>/dt=<day>/<start>-<producer>-open.jsonl.gz`), the length
    /// up to which its producer's journal (`<root>/.producers/<producer>.journal`) records complete
    /// members: the last `A` line after the `O` line naming the file (Docs/collection.md). Nil for
    /// any other file, or when there is no journal, or it is not a regular file or larger than
    /// ``maximumJournalBytes`` (the whole file is read).
    package static func committedLength(ofOpen path: String) -> Int64? {
        guard let identity = TraceFileIdentity(fileName: path), identity.kind == .open,
              let slash = path.lastIndex(of: "/") else { return nil }
        let folder = path[..<slash]
        let dayStart = folder.lastIndex(of: "/").map { folder.index(after: $0) } ?? folder.startIndex
        let day = folder[dayStart...]
        guard day.hasPrefix("dt=") else { return nil }
        let root = folder[..<dayStart]
        let journal = root + ".producers/" + identity.producer + ".journal"
        // Read as every state and cache is (`RegularFile`): a FIFO, a device or a link to one planted
        // there is refused, not waited on, and a journal past the limit is ignored rather than held.
        guard case .success(let data?) = RegularFile.read(String(journal), limit: Self.maximumJournalBytes) else { return nil }
        let relative = Array((day + "/" + path[path.index(after: slash)...]).utf8)
        var committed: Int64?
        var current = false
        // One pass over the bytes (a cron run reads every open file's journal: a week of lines each).
        data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            var fields: [Range<Int>] = []
            fields.reserveCapacity(5)
            guard let base = raw.baseAddress else { return }
            var lineStart = 0
            while lineStart < raw.count {
                let lineEnd = memchr(base + lineStart, 0x0A, raw.count - lineStart).map { UnsafeRawPointer($0) - base } ?? raw.count
                fields.removeAll(keepingCapacity: true)
                var i = lineStart
                while i < lineEnd, fields.count < 5 {
                    while i < lineEnd, raw[i] == 0x20 { i += 1 }
                    guard i < lineEnd else { break }
                    let start = i
                    while i < lineEnd, raw[i] != 0x20 { i += 1 }
                    fields.append(start..<i)
                }
                lineStart = lineEnd + 1
                guard let kind = fields.first, kind.count == 1 else { continue }
                switch (raw[kind.lowerBound], fields.count) {
                case (UInt8(ascii: "O"), 4):
                    current = raw[fields[1]].elementsEqual(relative)
                    if current { committed = 0 }
                case (UInt8(ascii: "A"), 4) where current:
                    committed = Int64(String(decoding: raw[fields[2]], as: UTF8.self)) ?? committed
                case (UInt8(ascii: "S"), 2):
                    current = false
                default:
                    break
                }
            }
        }
        return committed
    }
}
