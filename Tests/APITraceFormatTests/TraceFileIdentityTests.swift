import APITraceFormat
import APITraceTestSupport
import Foundation
import Testing

/// File names say when a file started and who wrote it; every report and alert run parses them all.
@Suite struct TraceFileIdentityTests {
    @Test func namesRoundTripAndPartsAreRead() throws {
        for (started, producer, sequence) in [(0, "p", 1), (1_795_341_600_000, "phone-7a-b", 42), (253_402_300_799_000, "x", 99_999)] as [(Int64, String, Int)] {
            let name = TraceFileIdentity(started: .init(millisecondsSince1970: started), producer: producer, sequence: sequence)
            for spelled in [name.fileName, "/some/folder/" + name.fileName, String(name.fileName.dropLast(3))] {
                let parsed = try #require(TraceFileIdentity(fileName: spelled), "\(spelled)")
                #expect(parsed == name)
            }
        }
        // Checked against Foundation's own reading of the instant.
        let parsed = try #require(TraceFileIdentity(fileName: "20261122T103015Z-ab-cd-0007.jsonl.gz"))
        let formatter = ISO8601DateFormatter()
        #expect(Double(parsed.started.millisecondsSince1970) / 1000 == formatter.date(from: "2026-11-22T10:30:15Z")!.timeIntervalSince1970)
        #expect(parsed.producer == "ab-cd" && parsed.sequence == 7)
    }

    @Test(arguments: [
        "notes.txt", "20261122T103015Z-p-0001.json", "20261122T103015Z-0001.jsonl.gz", "20261122T103015Z--0001.jsonl.gz",
        "20261122X103015Z-p-0001.jsonl.gz", "20261122T103015-p-0001.jsonl.gz", "2026112T103015Z-p-0001.jsonl.gz",
        "20261122T1O3015Z-p-0001.jsonl.gz", "20261122T103015Z-p-.jsonl.gz", "20261122T103015Z-p-+1.jsonl.gz",
        "20261122T103015Z-p-99999999999999999999999.jsonl.gz", ".jsonl.gz", "", "/", "20261122T103015Z-p-0001.jsonl.gz/",
    ])
    func otherNamesAreNotTraceNames(_ name: String) {
        #expect(TraceFileIdentity(fileName: name) == nil)
    }

    @Test("the collector's names: sealed with the end of their span, stored with a digest, open")
    func collectorNames() throws {
        let start = TraceTimestamp(rfc3339: "2026-11-22T10:00:12.000Z")!, end = TraceTimestamp(rfc3339: "2026-11-22T11:00:47.000Z")!
        for kind in [TraceFileIdentity.Kind.sealed(ended: end, tag: "1b2c3d4e"), .stored(digest: "1b2c3d4e5f607182"), .stored(digest: "0000000000000042"), .open, .written(sequence: 12)] {
            let identity = TraceFileIdentity(started: start, producer: "3f9a12c4", kind: kind)
            #expect(TraceFileIdentity(fileName: "/store/dt=2026-11-22/" + identity.fileName) == identity, "\(identity.fileName)")
        }
        let sealed = try #require(TraceFileIdentity(fileName: "20261122T100012Z-3f9a12c4-20261122T110047Z-1b2c3d4e.jsonl.gz"))
        #expect(sealed.ended == end && sealed.producer == "3f9a12c4" && sealed.isFinishedByConstruction)
        // 16 decimal digits are a digest, not a sequence: writers count files in 4 digits.
        #expect(TraceFileIdentity(fileName: "20261122T100012Z-p-0000000000000042.jsonl.gz")?.kind == .stored(digest: "0000000000000042"))
        #expect(TraceFileIdentity(fileName: "20261122T100012Z-p-open.jsonl.gz")?.isFinishedByConstruction == false)
        // Not hex, wrong lengths, an end that is no timestamp: a writer's name if its last part is a number, else nothing.
        #expect(TraceFileIdentity(fileName: "20261122T100012Z-p-20261122T110047Z-1B2C3D4E.jsonl.gz") == nil)
        #expect(TraceFileIdentity(fileName: "20261122T100012Z-p-1b2c3d4e5f60718.jsonl.gz") == nil)
        #expect(TraceFileIdentity(fileName: "20261122T100012Z-p-x0261122T110047Z-1b2c3d4e.jsonl.gz") == nil)
        #expect(TraceFileIdentity(fileName: "20261122T100012Z--20261122T110047Z-1b2c3d4e.jsonl.gz") == nil)
    }

    @Test("an open file's committed length comes from its producer's journal; a FIFO, a device link or an oversized journal there is ignored, not waited on or held")
    func committedLengthReadsOnlyARegularJournalOfBoundedSize() throws {
        let dir = TemporaryDirectory()
        let day = dir.file("store/dt=2026-11-23"), producers = dir.file("store/.producers")
        try FileManager.default.createDirectory(atPath: day, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: producers, withIntermediateDirectories: true)
        let name = "20261123T140000Z-3f9a12c4-open.jsonl.gz"
        let open = day + "/" + name, journal = producers + "/3f9a12c4.journal"
        FileManager.default.createFile(atPath: open, contents: Data([0x1F, 0x8B]))
        let digest = String(repeating: "ab", count: 32)
        let lines = """
            O dt=2026-11-23/20261123T130000Z-3f9a12c4-open.jsonl.gz 1795438800000 k
            A \(digest) 999 1795438800000
            S dt=2026-11-23/20261123T130000Z-3f9a12c4-20261123T140000Z-00000001.jsonl.gz
            O dt=2026-11-23/\(name) 1795442400000 k
            A \(digest) 4096 1795442400000
            A \(digest) 81920 1795442460000

            """
        try lines.write(toFile: journal, atomically: true, encoding: .utf8)
        #expect(TraceFileIdentity.committedLength(ofOpen: open) == 81_920)

        // Larger than the limit (one endless line after the real ones): ignored, not read into memory.
        let handle = try #require(FileHandle(forWritingAtPath: journal))
        handle.seekToEndOfFile()
        handle.write(Data(repeating: UInt8(ascii: "A"), count: TraceFileIdentity.maximumJournalBytes))
        try handle.close()
        #expect(TraceFileIdentity.committedLength(ofOpen: open) == nil)

        // A FIFO nobody writes to, and a link to an endless device: refused at once.
        try FileManager.default.removeItem(atPath: journal)
        #expect(mkfifo(journal, 0o644) == 0)
        #expect(TraceFileIdentity.committedLength(ofOpen: open) == nil)
        try FileManager.default.removeItem(atPath: journal)
        try FileManager.default.createSymbolicLink(atPath: journal, withDestinationPath: "/dev/zero")
        #expect(TraceFileIdentity.committedLength(ofOpen: open) == nil)
    }
}
