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
        // <yyyyMMdd>T<HHmmss>Z-<producer>-<sequence>: the producer may hold dashes, the sequence may not.
        guard stemCount >= 20, name[16] == UInt8(ascii: "-"), name[8] == UInt8(ascii: "T"), name[15] == UInt8(ascii: "Z"),
              let lastDash = name[..<stemCount].lastIndex(of: UInt8(ascii: "-")), lastDash > 17, lastDash + 1 < stemCount
        else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in name[range] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), value < Int.max / 10 - 9 else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let y = number(0..<4), let mo = number(4..<6), let d = number(6..<8),
              let h = number(9..<11), let mi = number(11..<13), let s = number(13..<15),
              let sequence = number((lastDash + 1)..<stemCount) else { return nil }
        let days = TraceTimestamp.daysFromCivil(year: y, month: mo, day: d)
        self.started = TraceTimestamp(millisecondsSince1970: (days * 86_400 + Int64(h * 3600 + mi * 60 + s)) * 1000)
        self.producer = String(decoding: name[17..<lastDash], as: UTF8.self)
        self.sequence = sequence
    }
}
