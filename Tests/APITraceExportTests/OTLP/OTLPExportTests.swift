import APITraceExport
import APITraceFormat
import APITraceTestSupport
import Foundation
import Testing

/// `OTLPExport` with the real sender against a real OTLP/HTTP receiver (Python, decoding with the
/// official opentelemetry-proto classes), on trace files written by independent Python; the
/// checker applies the mapping and the weights on its own.
@Suite("OTLP export to a real receiver")
struct OTLPExportTests {
    func export(
        _ folder: String, to receiver: OTLPReceiver, encoding: OTLPEndpoint.Encoding = .protobuf, state: String? = nil,
        batchSize: Int = 64, lanes: Int = 1, configure: (inout OTLPSender) -> Void = { _ in }
    ) throws -> OTLPExport.Outcome {
        var sender = OTLPSender(endpoint: OTLPEndpoint(base: URL(string: receiver.endpoint)!, encoding: encoding))
        sender.backoff = .milliseconds(50)
        configure(&sender)
        var cumulative = try state.map { try CumulativeExport.load(path: $0, selection: "otlp all") } ?? CumulativeExport(selection: "otlp all")
        var export = OTLPExport(encoding: encoding, batchSize: batchSize, commit: { current in
            if let state { try? current.save(path: state) }
        }) { [sender] signal, payload in
            sender.send(payload, signal: signal)
        }
        export.readingThreads = max(2, lanes)
        export.sendingLanes = lanes
        let outcome = export.run(TraceExportReader(), [folder], state: &cumulative)
        if let state, outcome.failure == nil {
            cumulative.forgetFiles(notIn: Set(outcome.read.filesFound))
            try cumulative.save(path: state)
        }
        return outcome
    }

    @Test("every request arrives as a CLIENT span and every other event as a log record, as the conventions and Docs/otlp.md say", arguments: [OTLPEndpoint.Encoding.protobuf, .json])
    func everyAttribute(encoding: OTLPEndpoint.Encoding) async throws {
        let dir = TemporaryDirectory()
        let traces = dir.file("traces")
        try await OTLPExpectations.generate(into: traces, seed: 11, requests: 400)
        let receiver = try await OTLPReceiver.start(in: dir.path)
        defer { receiver.stop() }
        let outcome = try await offPool { try export(traces, to: receiver, encoding: encoding) }
        #expect(outcome.failure == nil)
        #expect(outcome.spans == 401 && outcome.logs == 6)
        let checked = try await OTLPExpectations.check([traces], received: dir.file("received.jsonl"))
        #expect(checked == "OK 401 6")
        let requests = receiver.requests
        #expect(requests.allSatisfy { $0.headers["content-encoding"] == "gzip" })
        #expect(requests.allSatisfy { $0.headers["content-type"] == encoding.contentType })
        // Bounded batches: 407 items at 64 a batch, traces and logs apart, then the metrics.
        #expect(requests.filter { $0.path == "/v1/traces" }.count >= 7)
        #expect(requests.last?.path == "/v1/metrics")
    }

    @Test("across runs each event is sent once: new files, a grown file, a renamed file, a file replaced under a counted name")
    func exactlyOnceAcrossRuns() async throws {
        let dir = TemporaryDirectory()
        let traces = dir.file("traces"), gone = dir.file("gone"), more = dir.file("more")
        try await OTLPExpectations.generate(into: traces, seed: 1, requests: 120)
        try await OTLPExpectations.generate(into: more, seed: 2, requests: 60)
        try FileManager.default.createDirectory(atPath: gone, withIntermediateDirectories: true)
        let receiver = try await OTLPReceiver.start(in: dir.path)
        defer { receiver.stop() }
        let state = dir.file("state.json")
        let files = try FileManager.default.contentsOfDirectory(atPath: traces).sorted()
        let first = try await offPool { try export(traces, to: receiver, state: state) }
        #expect(first.failure == nil && first.spans == 121)
        // Nothing new: nothing sent but the metrics.
        let second = try await offPool { try export(traces, to: receiver, state: state) }
        #expect(second.spans == 0 && second.logs == 0)
        // A rename within the folder is the same file: not sent again.
        try FileManager.default.moveItem(atPath: traces + "/" + files[0], toPath: traces + "/" + files[0].replacingOccurrences(of: "-0001.", with: "-0009."))
        // Another file renamed in over a counted name: all its events are new. The one it replaced was sent before.
        try FileManager.default.moveItem(atPath: traces + "/" + files[1], toPath: gone + "/" + files[1])
        let replacement = try FileManager.default.contentsOfDirectory(atPath: more).sorted()[1]
        try FileManager.default.moveItem(atPath: more + "/" + replacement, toPath: traces + "/" + files[1])
        let third = try await offPool { try export(traces, to: receiver, state: state) }
        #expect(third.failure == nil)
        #expect(third.spans == 31, "only the replacement's requests")
        let checked = try await OTLPExpectations.check([traces, gone], received: dir.file("received.jsonl"))
        #expect(checked.hasPrefix("OK"), "\(checked)")
    }

    @Test("a receiver that answers 503 with Retry-After, then recovers: retried, everything arrives once")
    func retriesThenRecovers() async throws {
        let dir = TemporaryDirectory()
        let traces = dir.file("traces")
        try await OTLPExpectations.generate(into: traces, seed: 3, requests: 50)
        let receiver = try await OTLPReceiver.start(in: dir.path, replies: ["503:1", "503:1", "429:0", "504"])
        defer { receiver.stop() }
        let clock = ContinuousClock()
        let start = clock.now
        let outcome = try await offPool { try export(traces, to: receiver, batchSize: 1000) }
        let elapsed = clock.now - start
        #expect(outcome.failure == nil)
        #expect(elapsed >= .seconds(2), "two Retry-After: 1 honoured")
        let refused = receiver.requests.filter { $0.body["refused"] != nil }
        #expect(refused.count == 4)
        let checked = try await OTLPExpectations.check([traces], received: dir.file("received.jsonl"))
        #expect(checked == "OK 51 6")
    }

    @Test("a refusal stops the run with the marks of the accepted batches saved; the next run sends the rest, nothing twice")
    func stopsAndResumes() async throws {
        let dir = TemporaryDirectory()
        let traces = dir.file("traces")
        try await OTLPExpectations.generate(into: traces, seed: 4, requests: 200)
        let state = dir.file("state.json")
        // The first two batches are accepted, the third refused (400: not retried). Batches go out as
        // the reading threads finish them, so a loaded machine may send log records among the spans:
        // the spans accepted are those of the accepted requests to /v1/traces.
        let receiver = try await OTLPReceiver.start(in: dir.path, replies: ["200", "200", "400"])
        defer { receiver.stop() }
        let first = try await offPool { try export(traces, to: receiver, state: state, batchSize: 50) }
        #expect(first.failure?.contains("HTTP 400 from http://127.0.0.1:\(receiver.port)/v1/") == true, "\(first.failure ?? "no failure")")
        let acceptedSpanBatches = receiver.requests.prefix(2).filter { $0.path == "/v1/traces" }.count
        #expect(first.spans == 50 * acceptedSpanBatches)
        let second = try await offPool { try export(traces, to: receiver, state: state, batchSize: 50) }
        #expect(second.failure == nil)
        #expect(second.spans == 201 - first.spans)
        let checked = try await OTLPExpectations.check([traces], received: dir.file("received.jsonl"))
        #expect(checked == "OK 201 6")
    }

    @Test("files sent at once, a lane each: a refusal on one lane stops them all with every accepted batch marked; the next run sends the rest, each event once",
          arguments: [2, 3, 5])
    func lanesStopAndResume(accepted: Int) async throws {
        let dir = TemporaryDirectory()
        let traces = dir.file("traces")
        // Two files of about 200 requests: ten batches of 20 each, sent on two lanes at once.
        try await OTLPExpectations.generate(into: traces, seed: 12, requests: 400)
        let state = dir.file("state.json")
        let receiver = try await OTLPReceiver.start(in: dir.path, replies: Array(repeating: "200", count: accepted) + ["400"])
        defer { receiver.stop() }
        let first = try await offPool { try export(traces, to: receiver, state: state, batchSize: 20, lanes: 2) }
        #expect(first.failure?.contains("HTTP 400 from http://127.0.0.1:\(receiver.port)/v1/") == true, "\(first.failure ?? "no failure")")
        #expect(first.spans >= 20 * (accepted - 1) && first.spans < 401)
        let second = try await offPool { try export(traces, to: receiver, state: state, batchSize: 20, lanes: 2) }
        #expect(second.failure == nil)
        #expect(first.spans + second.spans == 401)
        // The checker fails any span that arrived twice or never.
        let checked = try await OTLPExpectations.check([traces], received: dir.file("received.jsonl"))
        #expect(checked == "OK 401 6")
    }

    @Test("two lanes have two files' requests in flight at once (a receiver taking 0.3 s a request)")
    func lanesOverlap() async throws {
        let dir = TemporaryDirectory()
        let traces = dir.file("traces")
        try await OTLPExpectations.generate(into: traces, seed: 13, requests: 120)
        let receiver = try await OTLPReceiver.start(in: dir.path, replies: Array(repeating: "slow", count: 6))
        defer { receiver.stop() }
        let outcome = try await offPool { try export(traces, to: receiver, batchSize: 20, lanes: 2) }
        #expect(outcome.failure == nil && outcome.spans == 121)
        // Sent one after the other, requests arrive at least 0.3 s apart; on two lanes, two arrive together.
        let times = receiver.requests.prefix(6).map(\.time).sorted()
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
        #expect(gaps.min().map { $0 < 0.2 } == true, "gaps between arrivals: \(gaps)")
        let checked = try await OTLPExpectations.check([traces], received: dir.file("received.jsonl"))
        #expect(checked == "OK 121 6")
    }

    @Test("an endpoint nobody listens on: the run stops after its tries with a message naming it, nothing marked")
    func unreachable() async throws {
        let dir = TemporaryDirectory()
        let traces = dir.file("traces")
        try await OTLPExpectations.generate(into: traces, seed: 5, requests: 10)
        let port = try freePort()
        let state = dir.file("state.json")
        let (outcome, counted) = try await offPool { () throws -> (OTLPExport.Outcome, Int) in
            var sender = OTLPSender(endpoint: OTLPEndpoint(base: URL(string: "http://127.0.0.1:\(port)")!))
            sender.maxAttempts = 2
            sender.backoff = .milliseconds(10)
            var cumulative = CumulativeExport(selection: "otlp all")
            let outcome = OTLPExport(commit: { try? $0.save(path: state) }) { sender.send($1, signal: $0) }
                .run(TraceExportReader(), [traces], state: &cumulative)
            return (outcome, cumulative.countedEvents(in: try FileManager.default.contentsOfDirectory(atPath: traces).sorted().map { traces + "/" + $0 }[0]))
        }
        #expect(counted == 0)
        #expect(outcome.failure?.contains("network error") == true)
        #expect(outcome.failure?.contains("127.0.0.1:\(port)/v1/traces") == true)
        #expect(!FileManager.default.fileExists(atPath: state))
    }

    @Test("long lines make smaller batches: no request carries much more than 4 MiB of text, however few items")
    func boundedBytes() async throws {
        let dir = TemporaryDirectory()
        let traces = dir.file("traces")
        try FileManager.default.createDirectory(atPath: traces, withIntermediateDirectories: true)
        // 24 log lines of about 700 KB each (random letters: gzip cannot hide them), written by Python.
        let script = """
            import gzip, json, random, sys
            rnd = random.Random(9)
            with gzip.open(sys.argv[1], "wt") as f:
                f.write(json.dumps({"type": "header", "format": "apitrace", "version": 1, "producer": "p", "started": "2026-11-22T00:00:00.000Z"}) + "\\n")
                for i in range(24):
                    message = "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(700000))
                    f.write(json.dumps({"type": "log", "ts": "2026-11-22T00:00:%02d.000Z" % i, "level": "info", "message": message}) + "\\n")
            """
        let made = try await runOffPool("/usr/bin/env", ["python3", "-c", script, traces + "/20261122T000000Z-p-0001.jsonl.gz"])
        #expect(made.status == 0, "\(String(decoding: made.stderr, as: UTF8.self))")
        let receiver = try await OTLPReceiver.start(in: dir.path)
        defer { receiver.stop() }
        let outcome = try await offPool { try export(traces, to: receiver, batchSize: 512) }
        #expect(outcome.failure == nil && outcome.logs == 24)
        let logs = receiver.requests.filter { $0.path == "/v1/logs" }
        let perRequest = logs.map { request -> Int in
            let groups = request.body["resourceLogs"] as? [[String: Any]] ?? []
            return groups.flatMap { ($0["scopeLogs"] as? [[String: Any]] ?? []) }.reduce(0) { $0 + (($1["logRecords"] as? [Any])?.count ?? 0) }
        }
        #expect(perRequest.reduce(0, +) == 24)
        #expect(logs.count >= 4)
        #expect(perRequest.allSatisfy { $0 * 700_000 <= (4 << 20) + 700_000 })
    }
}
