import APITraceFormat
import APITraceTestSupport
import Foundation
import Testing

/// Files a careless or hostile producer could write, read through the built `apitrace` by every
/// command: none may crash it (exit status below 128), each bad line is named in a warning, and
/// the good lines around it still count.
@Suite("Hostile trace files, through every command", .serialized)
struct HostileTraceFileTests {
    static let header = #"{"type":"header","format":"apitrace","version":1,"producer":"evil","app":"Otec","app_version":"2.1","started":"2026-11-22T10:00:00.000Z"}"#
    static func good(_ second: Int, status: Int = 200) -> String {
        #"{"type":"request","ts":"2026-11-22T10:00:\#(String(format: "%02d", second)).000Z","method":"GET","route":"/apps","status":\#(status),"duration_ms":12}"#
    }

    /// One bad line between two good ones: (name, line, the field or word its warning must name).
    static let classes: [(String, String, String)] = [
        ("tiny-sample-rate", #"{"type":"request","ts":"2026-11-22T10:00:01.000Z","method":"GET","route":"/apps","status":200,"duration_ms":5,"sample_rate":1e-300}"#, "sample_rate"),
        ("huge-suppressed", #"{"type":"error","ts":"2026-11-22T10:00:01.000Z","identity":"X","suppressed":9223372036854775000}"#, "suppressed"),
        ("huge-dropped", #"{"type":"dropped","ts":"2026-11-22T10:00:01.000Z","count":9223372036854775807,"reason":"r"}"#, "count"),
        ("huge-duration", #"{"type":"request","ts":"2026-11-22T10:00:01.000Z","method":"GET","route":"/apps","status":200,"duration_ms":1e300}"#, "duration_ms"),
        ("negative-duration", #"{"type":"request","ts":"2026-11-22T10:00:01.000Z","method":"GET","route":"/apps","status":200,"duration_ms":-5}"#, "duration_ms"),
        ("huge-status", #"{"type":"request","ts":"2026-11-22T10:00:01.000Z","method":"GET","route":"/apps","status":99999999999,"duration_ms":5}"#, "status"),
        ("year-one", #"{"type":"request","ts":"0001-01-01T00:00:00.000Z","method":"GET","route":"/apps","status":200,"duration_ms":5}"#, "ts"),
        ("offset-99", #"{"type":"request","ts":"2026-11-22T10:00:01.000+99:00","method":"GET","route":"/apps","status":200,"duration_ms":5}"#, "ts"),
        ("huge-bytes", #"{"type":"request","ts":"2026-11-22T10:00:01.000Z","method":"GET","route":"/apps","status":200,"duration_ms":5,"bytes_in":9223372036854775807}"#, "bytes_in"),
    ]

    static func writeFolder(_ bad: String) throws -> TemporaryDirectory {
        let dir = TemporaryDirectory()
        let text = [header, good(0), bad, good(2, status: 503), good(3)].joined(separator: "\n") + "\n"
        try Data(text.utf8).write(to: URL(fileURLWithPath: dir.path + "/20261122T100000Z-evil-0001.jsonl"))
        return dir
    }

    static let commands: [[String]] = [
        ["report", "--format", "json"], ["report"], ["report", "--format", "markdown"], ["report", "--format", "html"],
        ["export", "--format", "prometheus"], ["export", "--format", "har"], ["cat"],
    ]

    @Test("a bad number or instant: no command crashes, the warning names file, line and field, good lines count", arguments: classes.map(\.0))
    func badLine(name: String) async throws {
        let (_, line, field) = Self.classes.first { $0.0 == name }!
        let dir = try Self.writeFolder(line)
        let apitrace = try builtProduct("apitrace").path
        for command in Self.commands {
            let result = try await runOffPool(apitrace, command + [dir.path])
            let stderr = String(decoding: result.stderr, as: UTF8.self)
            #expect(result.status < 128, "\(command) \(name): status \(result.status)")
            #expect(result.status <= 1, "\(command) \(name): status \(result.status) \(stderr)")
            let warned = stderr + String(decoding: result.stdout, as: UTF8.self)
            #expect(warned.contains("evil-0001.jsonl:3"), "\(command) \(name) names no line: \(stderr)")
            #expect(warned.contains(field), "\(command) \(name) names no field \(field): \(stderr)")
        }
        let json = try await runOffPool(apitrace, ["report", "--format", "json", dir.path])
        let report = try JSONSerialization.jsonObject(with: json.stdout) as! [String: Any]
        let totals = report["totals"] as! [String: Any]
        // The three good requests always count; a sample_rate ignored counts its line once.
        let expected = name == "tiny-sample-rate" ? 4 : 3
        #expect(totals["requests"] as? Int == expected, "\(name): \(totals)")
        #expect(totals["server_errors"] as? Int == 1)
        #expect((totals["estimated_requests"] as? Double ?? 0) <= Double(expected))
    }

    @Test("control characters and markup in a route reach no terminal, page, table or scrape raw")
    func hostileText() async throws {
        let route = #"/a\u001b[2J\u001b]0;pwned\u0007\r\n<!channel>|<script>x</script>`**"#
        let bad = #"{"type":"request","ts":"2026-11-22T10:00:01.000Z","method":"GET","route":"\#(route)","status":500,"duration_ms":5}"#
        let dir = try Self.writeFolder(bad)
        let apitrace = try builtProduct("apitrace").path
        let text = try await runOffPool(apitrace, ["report", dir.path])
        #expect(!text.stdout.contains(0x1B) && !text.stdout.contains(0x07) && !text.stdout.contains(0x0D))
        let html = String(decoding: try await runOffPool(apitrace, ["report", "--format", "html", dir.path]).stdout, as: UTF8.self)
        #expect(!html.contains("<script>x"))
        let md = String(decoding: try await runOffPool(apitrace, ["report", "--format", "markdown", dir.path]).stdout, as: UTF8.self)
        // Outside code spans (where Markdown shows text as it is) nothing may be markup, and the
        // route row keeps its column count.
        let routeRows = md.split(separator: "\n").filter { $0.contains("channel") }
        #expect(!routeRows.isEmpty)
        let header = try #require(md.split(separator: "\n").first { $0.hasPrefix("| method | route |") })
        for row in routeRows {
            let outside = String(row).replacingOccurrences(of: #"(`+)(?:(?!\1).)*\1"#, with: "", options: .regularExpression)
            #expect(!outside.contains("<script>") && !outside.contains("<!channel>"), "\(row)")
            if row.hasPrefix("| GET") {
                let cells = String(row).replacingOccurrences(of: "\\|", with: "").split(separator: "|", omittingEmptySubsequences: false).count
                #expect(cells == header.split(separator: "|", omittingEmptySubsequences: false).count, "\(row)")
            }
        }
        let prom = try await runOffPool(apitrace, ["export", "--format", "prometheus", dir.path])
        #expect(prom.status == 0 && !prom.stdout.contains(0x0D) && !prom.stdout.contains(0x1B))
    }

    @Test("a 300 MB line without a newline (1 MB gzipped) is skipped with its offset, in bounded memory")
    func endlessLine() async throws {
        #if os(Linux)
        let dir = TemporaryDirectory()
        let path = dir.path + "/20261122T100000Z-evil-0001.jsonl.gz"
        // Written by Python's gzip, independently of our writer.
        let script = """
            import gzip, sys
            with gzip.open(sys.argv[1], "wb", compresslevel=6) as f:
                f.write((sys.argv[2] + "\\n" + sys.argv[3] + "\\n").encode())
                f.write(b'{"type":"log","ts":"2026-11-22T10:00:01Z","level":"info","message":"')
                chunk = b"a" * (1 << 20)
                for _ in range(300): f.write(chunk)
                f.write(b'"}\\n')
                f.write((sys.argv[4] + "\\n").encode())
            """
        let made = try await runOffPool("/usr/bin/env", ["python3", "-c", script, path, Self.header, Self.good(0), Self.good(3, status: 503)])
        try #require(made.status == 0)
        let apitrace = try builtProduct("apitrace").path
        for command in [["report", "--format", "json"], ["export", "--format", "prometheus"], ["cat"]] {
            let (status, stdout, stderr, peakKB) = try await Self.runMeasuringPeak(apitrace, command + [dir.path])
            #expect(status <= 1, "\(command): \(status)")
            #expect(peakKB < 256 * 1024, "\(command) peaked at \(peakKB) KB")
            #expect(String(decoding: stderr, as: UTF8.self).contains("evil-0001.jsonl.gz:3: skipped a line longer than"), "\(command)")
            if command[0] == "report" {
                let totals = (try JSONSerialization.jsonObject(with: stdout) as! [String: Any])["totals"] as! [String: Any]
                #expect(totals["requests"] as? Int == 2)
            }
        }
        #endif
    }

    /// Runs a command and samples its peak resident memory (VmHWM) from /proc until it exits.
    static func runMeasuringPeak(_ executable: String, _ arguments: [String]) async throws -> (Int32, Data, Data, Int) {
        let child = try ChildProcess(executable, arguments)
        var peak = 0
        while child.isRunning {
            if let status = try? String(contentsOfFile: "/proc/\(child.process.processIdentifier)/status", encoding: .utf8),
               let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
               let kb = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") {
                peak = max(peak, kb)
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        let done = try await child.finishedBytes(seconds: 300)
        return (done.status, done.stdout, done.stderr, peak)
    }
}
