import APITraceFormat
import APITraceTestSupport
import Foundation
import Testing

/// `apitrace export --format har`, the built binary, on generated traces: its peak memory (the
/// child's `ru_maxrss`) and its output, read by Python's `json` and checked against Python's own
/// reading of the trace files.
@Suite("apitrace export --format har")
struct HARExportCommandTests {
    /// Checks a HAR file against the request lines of the trace files in a folder, as Python reads both.
    static let check = """
        import gzip, json, math, os, sys, datetime
        har = json.load(open(sys.argv[1]))
        assert har["log"]["version"] == "1.2", "version"
        entries = har["log"]["entries"]
        requests = []
        held = 0
        for name in sorted(os.listdir(sys.argv[2])):
            if not name.endswith(".jsonl.gz"): continue
            for raw in gzip.open(os.path.join(sys.argv[2], name)).read().split(b"\\n")[1:]:
                if not raw: continue
                o = json.loads(raw)
                if o["type"] != "request": continue
                end = datetime.datetime.strptime(o["ts"], "%Y-%m-%dT%H:%M:%S.%fZ")
                start = end - datetime.timedelta(milliseconds=math.floor(o["duration_ms"] + 0.5))
                requests.append((start.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (start.microsecond // 1000), o))
                # The bytes the export holds for it (HAREntryRecord): flags, end time, 8 per number, 4 + UTF-8 per text.
                held += 12 + 8 * sum(k in o for k in ("duration_ms", "dns_ms", "connect_ms", "tls_ms", "ttfb_ms", "attempt", "bytes_in", "bytes_out", "status"))
                held += sum(4 + len(o[k].encode()) for k in ("method", "route", "host", "error", "session", "trace_id", "protocol") if k in o)
        assert len(entries) == len(requests), f"{len(entries)} entries for {len(requests)} requests"
        starts = [e["startedDateTime"] for e in entries]
        assert starts == sorted(starts), "entries not in start order"
        want = sorted((s, o["method"], o["route"], o.get("status", 0), o["duration_ms"]) for s, o in requests)
        got = sorted((e["startedDateTime"], e["request"]["method"], e["_route"], e["response"]["status"], e["time"]) for e in entries)
        assert want == got, "entries differ from the requests"
        print("OK", len(entries), held)
        """

    @Test("130,000 requests, more than the export holds in memory (10 MiB of records), stream out under 64 MiB of peak memory (the whole archive in memory took 13 KiB per request), every request once, in start order", .requires(.python3))
    func boundedMemory() async throws {
        let dir = TemporaryDirectory()
        let generated = try GeneratedTraces(events: 160_000, files: 6, seed: 9)
        let traces = generated.folder.path
        let output = dir.file("out.har")
        let run = try await apitraceBounded(["export", "--format", "har", "-o", output, traces], environment: ["TMPDIR": dir.path], wallSeconds: 300)
        #expect(run.result.status == 0, "\(run.result.stderr)")
        #expect(run.peakMB < 64, "peak RSS \(run.peakMB) MiB")
        let checked = try await runOffPool("/usr/bin/env", ["python3", "-c", Self.check, output, traces])
        #expect(checked.status == 0, "\(String(decoding: checked.stderr, as: UTF8.self))")
        let summary = String(decoding: checked.stdout, as: UTF8.self)
        #expect(summary.hasPrefix("OK "))
        // Python's count of the records held: over the 10 MiB kept in memory, so part of them waited
        // in sorted temporary files and the bound holds past the in-memory part.
        let held = Int(summary.split(separator: " ").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
        #expect(held > 10 << 20, "\(summary)")
    }

    @Test("to standard output, with a session filter: the same entries as the file; no usable trace is exit 1 with nothing written")
    func stdoutAndErrors() async throws {
        let dir = TemporaryDirectory()
        let generated = try GeneratedTraces(events: 2_000, files: 2, seed: 3)
        let traces = generated.folder.path
        let toFile = try await apitrace(["export", "--format", "har", "-o", dir.file("a.har"), traces])
        #expect(toFile.status == 0 && toFile.stdout.isEmpty, "\(toFile.stderr)")
        let toStdout = try await apitrace(["export", "--format", "har", traces])
        #expect(toStdout.status == 0)
        #expect(Data(toStdout.stdout.utf8) == (try Data(contentsOf: URL(fileURLWithPath: dir.file("a.har")))))
        let har = try #require(try JSONSerialization.jsonObject(with: Data(toStdout.stdout.utf8)) as? [String: Any])
        let entries = try #require((har["log"] as? [String: Any])?["entries"] as? [[String: Any]])
        let session = try #require(entries.first?["_session"] as? String)
        let one = try await apitrace(["export", "--format", "har", "--session", session, traces])
        let kept = try #require(((try JSONSerialization.jsonObject(with: Data(one.stdout.utf8)) as? [String: Any])?["log"] as? [String: Any])?["entries"] as? [[String: Any]])
        #expect(!kept.isEmpty && kept.count == entries.filter { $0["_session"] as? String == session }.count)
        try FileManager.default.createDirectory(atPath: dir.file("empty"), withIntermediateDirectories: true)
        let none = try await apitrace(["export", "--format", "har", dir.file("empty")])
        #expect(none.status == 1 && none.stdout.isEmpty && none.stderr.contains("no usable trace file"))
    }
}
