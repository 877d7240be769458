/// The name of a trace file: `<UTC start, basic ISO 8601>-<producer id>-<sequence>.jsonl.gz`.
///
/// Names sort by time, so listing a folder in name order reads it in time order, and a reader
/// can skip files that started after a time range without opening them.
package struct TraceFileName: Sendable, Equatable {
    /// When the file was started.
    package var started: TraceTimestamp
    /// Id of the producer.
    package var producer: String
    /// Sequence number of the file within the producer's run.
    package var sequence: Int

    package init(started: TraceTimestamp, producer: String, sequence: Int) {
        self.started = started
        self.producer = producer
        self.sequence = sequence
    }

    /// The file name, e.g. `20261122T100000Z-3f9a12c4-0001.jsonl.gz`.
    package var fileName: String {
        let seq = String(sequence)
        return "\(started.basicISO8601)-\(producer)-\(String(repeating: "0", count: max(0, 4 - seq.count)) + seq).jsonl.gz"
    }

    /// Parses a file name (a path's last component); `nil` when it does not follow the pattern.
    package init?(fileName: String) {
        let name = fileName.split(separator: "/").last.map(String.init) ?? fileName
        guard name.hasSuffix(".jsonl.gz") || name.hasSuffix(".jsonl") else { return nil }
        let stem = name.hasSuffix(".gz") ? name.dropLast(9) : name.dropLast(6)
        let parts = stem.split(separator: "-")
        guard parts.count >= 3, let sequence = Int(parts.last!), parts[0].count == 16 else { return nil }
        let t = Array(parts[0].utf8)
        func num(_ range: Range<Int>) -> Int? { Int(String(decoding: t[range], as: UTF8.self)) }
        guard t[8] == UInt8(ascii: "T"), t[15] == UInt8(ascii: "Z"),
              let y = num(0..<4), let mo = num(4..<6), let d = num(6..<8),
              let h = num(9..<11), let mi = num(11..<13), let s = num(13..<15) else { return nil }
        let days = TraceTimestamp.daysFromCivil(year: y, month: mo, day: d)
        self.started = TraceTimestamp(millisecondsSince1970: (days * 86_400 + Int64(h * 3600 + mi * 60 + s)) * 1000)
        self.producer = parts[1..<(parts.count - 1)].joined(separator: "-")
        self.sequence = sequence
    }
}
