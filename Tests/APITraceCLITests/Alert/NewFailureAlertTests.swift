import APITraceTestSupport
import Foundation
import Testing

/// The Fabric story through the built binary, run as cron runs it: a release starts failing to
/// decode `data.apps[*].stability`, and a `new_failures` rule pages once, naming the path and the
/// version; failures the baseline knows, or that one device alone meets, do not page.
@Suite("new and regressed failures page once", .serialized)
struct NewFailureAlertTests {
    static let day = 86_400_000 as Int64
    static let release = 1_795_341_600_000 as Int64  // 2026-11-22T10:00:00Z: version 2.4.0 ships

    static func iso(_ ms: Int64) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
    }

    static func file(_ dir: String, producer: String, version: String, start: Int64, _ events: [String]) throws {
        let name = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(start) / 1000))
            .replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ":", with: "")
        let header = #"{"type":"header","format":"apitrace","version":1,"producer":"\#(producer)","app":"Otec","app_version":"\#(version)","started":"\#(iso(start))"}"#
        try Data(([header] + events).joined(separator: "\n").appending("\n").utf8)
            .write(to: URL(fileURLWithPath: "\(dir)/\(name)-\(producer)-0001.jsonl"))
    }

    static func decode(_ ms: Int64, session: String, entity: String = "App", path: String) -> String {
        #"{"type":"decode_failure","ts":"\#(iso(ms))","session":"\#(session)","route":"/apps","entity":"\#(entity)","kind":"keyNotFound","path":"\#(path)","key":"stability","message":"No value associated with key stability"}"#
    }

    static func request(_ ms: Int64, session: String) -> String {
        #"{"type":"request","ts":"\#(iso(ms))","session":"\#(session)","method":"GET","route":"/apps","status":200,"duration_ms":30}"#
    }

    /// Runs `apitrace alert` at each instant with a command notifier that appends what it is sent to a file.
    static func cron(_ dir: String, at instants: [Int64]) async throws -> [[String: Any]] {
        let pages = dir + "/pages.jsonl"
        try """
            rules:
              - name: new-failures
                new_failures: {baseline: 7d, window: 1h, min_count: 5, min_sessions: 3}
                notify: [log]
            notifiers:
              log: {type: command, command: "cat >> \(pages); echo >> \(pages)"}
            """.write(toFile: dir + "/rules.yaml", atomically: true, encoding: .utf8)
        let apitrace = try builtProduct("apitrace").path
        for t in instants {
            let out = try await runOffPool(apitrace, ["alert", dir + "/traces", "--rules", dir + "/rules.yaml", "--state", dir + "/state.json", "--now", iso(t)])
            #expect(out.status == 0, "\(iso(t)): \(String(decoding: out.stderr, as: UTF8.self))")
        }
        guard let text = try? String(contentsOfFile: pages, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    @Test("a new decode-failure group in a new version pages once; known and single-device failures do not")
    func newGroup() async throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.path + "/traces", withIntermediateDirectories: true)
        // Three days of 2.3.0 with an old, known failure (a missing `logo`) every hour.
        var old: [String] = []
        for h in 0..<72 {
            let t = Self.release - 3 * Self.day + Int64(h) * 3_600_000
            old += [Self.request(t, session: "old-\(h % 7)"), Self.decode(t + 1000, session: "old-\(h % 7)", path: "data.apps[\(h % 9)].logo")]
        }
        try Self.file(dir.path + "/traces", producer: "old", version: "2.3.0", start: Self.release - 3 * Self.day, old)
        // 2.4.0: 40 sessions; 12 of them meet the missing stability key, and still the old logo failure;
        // one device alone meets a third failure many times.
        var new: [String] = []
        for i in 0..<400 {
            let t = Self.release + Int64(i) * 9_000
            let session = "s-\(i % 40)"
            new.append(Self.request(t, session: session))
            if i % 40 < 12 { new.append(Self.decode(t + 10, session: session, path: "data.apps[\(i % 30)].stability")) }
            if i % 50 == 0 { new.append(Self.decode(t + 20, session: session, path: "data.apps[\(i % 9)].logo")) }
            if i % 10 == 0 { new.append(Self.decode(t + 30, session: "lonely-device", entity: "Banner", path: "data.banner.title")) }
        }
        try Self.file(dir.path + "/traces", producer: "new", version: "2.4.0", start: Self.release, new)

        let pages = try await Self.cron(dir.path, at: (1...10).map { Self.release + Int64($0) * 300_000 })
        let triggers = pages.filter { $0["action"] as? String == "trigger" }
        #expect(triggers.count == 1, "\(pages)")
        let summary = triggers.first?["summary"] as? String ?? ""
        #expect(summary.contains("data.apps[*].stability") && summary.contains("2.4.0"), "\(summary)")
        #expect(!summary.contains("logo") && !summary.contains("Banner"), "\(summary)")
        let evidence = triggers.first?["evidence"] as? [String: Any]
        let failures = evidence?["new_failures"] as? [[String: Any]] ?? []
        #expect(failures.count == 1)
        #expect((failures.first?["sessions"] as? Int ?? 0) >= 3)
        #expect(failures.first?["example_path"] as? String != nil)
    }

    @Test("a failure that stopped days ago and returns in a newer version pages as regressed")
    func regressed() async throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.path + "/traces", withIntermediateDirectories: true)
        var old: [String] = []
        for h in 0..<24 {
            let t = Self.release - 5 * Self.day + Int64(h) * 3_600_000
            old += (0..<3).map { Self.decode(t + Int64($0), session: "old-\($0 + h)", path: "data.apps[\(h)].stability") }
        }
        try Self.file(dir.path + "/traces", producer: "old", version: "2.2.0", start: Self.release - 5 * Self.day, old)
        var new: [String] = []
        for i in 0..<60 { new.append(Self.decode(Self.release + Int64(i) * 20_000, session: "s-\(i % 10)", path: "data.apps[\(i)].stability")) }
        try Self.file(dir.path + "/traces", producer: "new", version: "2.4.0", start: Self.release, new)
        let triggers = try await Self.cron(dir.path, at: [Self.release + 20 * 60_000, Self.release + 25 * 60_000]).filter { $0["action"] as? String == "trigger" }
        #expect(triggers.count == 1)
        #expect((triggers.first?["summary"] as? String)?.hasPrefix("new-failures: regressed decode_failure") == true, "\(triggers)")
    }
}
