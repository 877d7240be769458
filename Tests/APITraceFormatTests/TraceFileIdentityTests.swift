import APITraceFormat
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
}
