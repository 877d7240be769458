import APITraceTestSupport
import APITraceFormat
import Foundation
import Testing

/// `apitrace collect --instance-id` keeps its `/metrics` counters in the store: a real collector
/// child SIGKILLed in the middle of uploads and restarted serves exactly what was stored (checked
/// against Python's count of the stored files), never less than Prometheus saw before, and two
/// collectors on one store each count their own.
@Suite("apitrace collect keeps its ingest counters across SIGKILL")
struct CollectDurableCountersTests {
    static let token = "secret-token"

    static func start(_ dir: TemporaryDirectory, instance: String) async throws -> (ChildProcess, String) {
        let child = try ChildProcess(
            try builtProduct("apitrace").path,
            ["collect", "--listen", "127.0.0.1:0", "--dir", dir.path, "--token-env", "APITRACE_TEST_TOKEN", "--instance-id", instance],
            environment: ["APITRACE_TEST_TOKEN": token, "LOG_LEVEL": "error"])
        let line = try await child.waitForLine("the collector to listen") { $0.contains("listening on http://127.0.0.1:") }
        let port = Int(line.split(separator: ":")[3].split(separator: "/")[0])!
        return (child, "http://127.0.0.1:\(port)")
    }

    /// Segment `i` of `producer`: a minute apart, so a producer's segments are appended to one open
    /// file and the 60th starts a new hour (sealing it). `route` adds requests of a route of their own.
    static func segment(_ producer: String, _ i: Int, route: String? = nil) -> [UInt8] {
        let started = TraceFiles.day.adding(milliseconds: Int64(i) * 61_000)
        var events = TraceFiles.requests(30 + i % 7, seed: i + 7 * producer.utf8.count, start: started)
        if let route {
            events += (0..<5).map { j in
                TraceEvent(timestamp: started.adding(milliseconds: Int64(j)), .request(.init(method: "GET", route: route, status: j == 0 ? 500 : 200, durationMs: Double(j))))
            }
        }
        return TraceFiles.make(producer: producer, started: started, events: events)
    }

    /// Per "route status" requests and the events of every stored file of producers starting with
    /// the prefix; an open file is read up to the length its journal commits (a killed append may
    /// have left bytes past it, which the next append cuts off).
    static let pythonCount = """
        import gzip, json, os, sys
        root, prefix = sys.argv[1], sys.argv[2]
        committed = {}
        jdir = os.path.join(root, ".producers")
        for name in os.listdir(jdir) if os.path.isdir(jdir) else []:
            text = open(os.path.join(jdir, name), "rb").read().decode()
            current, length = None, 0
            for line in text.split("\\n")[:-1]:
                f = line.split(" ")
                if f[0] == "O" and len(f) == 4: current, length = f[1], 0
                elif f[0] == "A" and len(f) == 4 and current: length = int(f[2]); committed[current] = length
                elif f[0] == "S": current = None
        out = {"requests": {}, "events": 0}
        for d, dirs, names in os.walk(root):
            dirs[:] = [x for x in dirs if not x.startswith(".")]
            for name in names:
                if name.startswith(".") or not name.endswith(".jsonl.gz") or not name.split("-")[1].startswith(prefix): continue
                relative = os.path.relpath(os.path.join(d, name), root)
                data = open(os.path.join(d, name), "rb").read()
                if name.endswith("-open.jsonl.gz"): data = data[:committed.get(relative, 0)]
                if not data: continue
                for raw in gzip.decompress(data).split(b"\\n"):
                    if not raw: continue
                    o = json.loads(raw)
                    if o.get("type") == "header": continue
                    out["events"] += 1
                    if o.get("type") == "request":
                        key = o["route"] + " " + ("" if o.get("status") is None else str(o["status"]))
                        out["requests"][key] = out["requests"].get(key, 0) + 1
        print(json.dumps(out))
        """

    struct PythonCount: Decodable {
        var requests: [String: Double]
        var events: Int
    }

    static func python(_ dir: TemporaryDirectory, producers prefix: String) async throws -> PythonCount {
        let result = try await runOffPool("/usr/bin/env", ["python3", "-c", pythonCount, dir.path, prefix])
        try #require(result.status == 0, "python3: \(String(decoding: result.stderr, as: UTF8.self))")
        return try JSONDecoder().decode(PythonCount.self, from: result.stdout)
    }

    /// Every sample of the exposition, `name{labels}` to value.
    static func scrape(_ base: String) async throws -> [String: Double] {
        let answer = try await HTTPClient.request("GET", base + "/metrics")
        try #require(answer.status == 200)
        var samples: [String: Double] = [:]
        for line in answer.text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            samples[String(line[..<space])] = value
        }
        return samples
    }

    /// The request counter summed per "route status".
    static func requests(_ samples: [String: Double]) -> [String: Double] {
        var out: [String: Double] = [:]
        for (key, value) in samples where key.hasPrefix("apitrace_http_client_requests_total{") && value > 0 {
            let route = key.firstMatch(of: /url_template="([^"]*)"/).map { String($0.output.1) } ?? "?"
            let status = key.firstMatch(of: /http_response_status_code="([^"]*)"/).map { String($0.output.1) } ?? ""
            out[route + " " + status, default: 0] += value
        }
        return out
    }

    static func expectCounts(_ samples: [String: Double], equal expected: PythonCount, _ who: String) {
        #expect(requests(samples) == expected.requests, "\(who): requests counted \(requests(samples)), Python \(expected.requests)")
        #expect(samples["apitrace_collector_events_counted_total"] == Double(expected.events), "\(who): events counted \(samples["apitrace_collector_events_counted_total"] ?? -1), Python \(expected.events)")
    }

    @Test("SIGKILL mid-upload and a restart lose and double nothing: /metrics equals Python's count of what each of two collectors on one store stored, and never falls")
    func survivesSIGKILL() async throws {
        let dir = TemporaryDirectory()
        var (alpha, alphaURL) = try await Self.start(dir, instance: "alpha")
        let (beta, betaURL) = try await Self.start(dir, instance: "beta")
        defer { alpha.stop(); beta.stop() }

        // The same instance id twice on one store is refused: its counters would mix.
        let twin = try ChildProcess(
            try builtProduct("apitrace").path,
            ["collect", "--listen", "127.0.0.1:0", "--dir", dir.path, "--token-env", "APITRACE_TEST_TOKEN", "--instance-id", "alpha"],
            environment: ["APITRACE_TEST_TOKEN": Self.token, "LOG_LEVEL": "error"])
        let refused = try await twin.finished()
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("instance \"alpha\""), "\(refused.stderr)")

        // Phase 1: both collectors store segments of their own producers; Prometheus scrapes alpha.
        var sent: [[UInt8]] = []
        for i in 0..<40 {
            let body = Self.segment("alpha\(i % 4)", i)
            sent.append(body)
            #expect(try await HTTPClient.upload(alphaURL + "/v1/traces", body).status == 201)
            #expect(try await HTTPClient.upload(betaURL + "/v1/traces", Self.segment("beta\(i % 3)", i)).status == 201)
        }
        // Past 512 uploads beta cuts its counter log and writes a snapshot (uploads on four connections, some in flight while it does).
        let small = (0..<530).map { i in
            TraceFiles.make(producer: "betasmall\(i)", events: TraceFiles.requests(1 + i % 3, seed: i))
        }
        let betaUpload = betaURL + "/v1/traces"
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<4 {
                group.addTask { () async throws -> Void in
                    for (n, body) in small.enumerated() where n % 4 == lane {
                        let status = try await HTTPClient.upload(betaUpload, body).status
                        #expect(status == 201)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(!FileManager.default.fileExists(atPath: dir.file(".collectors/beta/counts-1.log")), "the first log generation is cut after 512 uploads")
        #expect(FileManager.default.fileExists(atPath: dir.file(".collectors/beta/counts-2.log")))
        _ = try await Self.scrape(alphaURL)
        _ = try await Self.scrape(betaURL)  // new series show at 0 first
        let seen = try await Self.scrape(alphaURL)
        #expect(seen["apitrace_collector_events_counted_total"] ?? 0 > 0)

        // Phase 2: uploads on four connections (a route of their own, never scraped), killed in the middle.
        let phase2 = (40..<100).map { Self.segment("alpha\($0 % 4)", $0, route: "/after-scrape") }
        let answered = Locked(0)
        let uploadURL = alphaURL + "/v1/traces"
        let uploads = Task {
            await withTaskGroup(of: Void.self) { group in
                for lane in 0..<4 {
                    group.addTask {
                        for (n, body) in phase2.enumerated() where n % 4 == lane {
                            guard (try? await HTTPClient.upload(uploadURL, body)) != nil else { return }
                            answered.withLock { $0 += 1 }
                        }
                    }
                }
            }
        }
        try await waitUntil("20 uploads of phase 2 to be answered", seconds: 120) { answered.withLock { $0 } >= 20 }
        try await alpha.kill(SIGKILL)
        _ = await uploads.value

        (alpha, alphaURL) = try await Self.start(dir, instance: "alpha")
        // Nothing Prometheus saw falls, and what it never saw starts at 0.
        let first = try await Self.scrape(alphaURL)
        // The ingest counters; the collector's own (files accepted, bytes received...) start at 0 on each start.
        let ingest = ["apitrace_http_client_requests_total{", "http_client_request_duration_seconds_", "apitrace_collector_events_counted_total", "apitrace_collector_files_counted_total"]
        for (series, value) in seen where value > 0 && ingest.contains(where: series.hasPrefix) {
            #expect((first[series] ?? -1) >= value, "\(series) fell from \(value) to \(first[series] ?? -1) across the restart")
        }
        for (series, value) in first where series.contains("/after-scrape") {
            #expect(value == 0, "\(series) never scraped before the kill shows at \(value) first, not 0")
        }
        // Sending everything again (as uploaders do after lost answers) stores what was missing and counts nothing twice.
        for body in sent + phase2 {
            let status = try await HTTPClient.upload(alphaURL + "/v1/traces", body).status
            #expect(status == 200 || status == 201)
        }
        let alphaCount = try await Self.python(dir, producers: "alpha")
        let betaCount = try await Self.python(dir, producers: "beta")
        #expect(alphaCount.requests["/after-scrape 500"] == Double(phase2.count))
        Self.expectCounts(try await Self.scrape(alphaURL), equal: alphaCount, "alpha after SIGKILL and restart")
        Self.expectCounts(try await Self.scrape(betaURL), equal: betaCount, "beta")

        // A clean restart of both keeps the counts too.
        try await alpha.kill(SIGTERM)
        try await beta.kill(SIGKILL)
        (alpha, alphaURL) = try await Self.start(dir, instance: "alpha")
        let (beta2, beta2URL) = try await Self.start(dir, instance: "beta")
        defer { beta2.stop() }
        Self.expectCounts(try await Self.scrape(alphaURL), equal: alphaCount, "alpha after a second restart")
        Self.expectCounts(try await Self.scrape(beta2URL), equal: betaCount, "beta after SIGKILL and restart")
    }
}
