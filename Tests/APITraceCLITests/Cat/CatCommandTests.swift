import APITraceTestSupport
import APITraceFormat
import Foundation
import Testing

@Suite("apitrace cat")
struct CatCommandTests {
    @Test("prints the header and every event as JSON Lines, exit 0")
    func printsEvents() async throws {
        let dir = TemporaryDirectory()
        let writer = TraceFileWriter(configuration: .init(directory: dir.path, producer: "catp"))
        for event in everyEventType { writer.append(event) }
        writer.close()
        let result = try await runOffPool(try builtProduct("apitrace").path, ["cat", dir.path])
        #expect(result.status == 0)
        let lines = String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(lines.count == everyEventType.count + 1)
        #expect(lines.first?.contains(#""producer":"catp""#) == true)
        #expect(Array(lines.dropFirst()) == everyEventType.map(\.jsonLine))
        #expect(result.stderr.isEmpty)
    }

    @Test("a damaged file prints what it can, warns with the file and offset, exit 1")
    func damaged() async throws {
        let dir = TemporaryDirectory()
        let writer = TraceFileWriter(configuration: .init(directory: dir.path))
        for event in everyEventType { writer.append(event) }
        writer.close()
        let path = dir.traceFiles[0]
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        try bytes.prefix(bytes.count - 4).write(to: URL(fileURLWithPath: path))
        let result = try await runOffPool(try builtProduct("apitrace").path, ["cat", "--no-headers", path])
        #expect(result.status == 1)
        #expect(String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").count == everyEventType.count)
        let warning = String(decoding: result.stderr, as: UTF8.self)
        #expect(warning.contains(path) && warning.contains("truncated at byte"))
    }

    @Test("nothing readable: exit 2 with a message naming the path")
    func nothingReadable() async throws {
        let result = try await runOffPool(try builtProduct("apitrace").path, ["cat", "/nonexistent/x.jsonl.gz"])
        #expect(result.status == 2)
        #expect(String(decoding: result.stderr, as: UTF8.self).contains("/nonexistent/x.jsonl.gz"))
    }

    @Test("valid lines pass through byte for byte; invalid ones are skipped with a warning naming file and line")
    func passThrough() async throws {
        let dir = TemporaryDirectory()
        let header = TraceFileHeader(producer: "raw1", started: .init(millisecondsSince1970: base)).jsonLine
        // Spacing, key order and unknown fields that an encoder would not reproduce.
        let odd1 = #"{ "ts" : "2026-11-22T10:00:01.000Z", "type":"log", "level":"info","message":"caf\u00e9", "extra":{"a":[1,2.50]} }"#
        let missingRoute = #"{"type":"request","ts":"2026-11-22T10:00:02.000Z","method":"GET","duration_ms":1}"#
        let odd2 = #"{"duration_ms":1.0e1,"route":"/a","method":"GET","ts":"2026-11-22T10:00:03.000Z","type":"request","status":200}"#
        let unknown = #"{"type":"future_thing","ts":"2026-11-22T10:00:04.000Z"}"#
        let path = try writeGzip(dir, "20261122T100000Z-raw1-0001", [header, odd1, missingRoute, "not json", odd2, unknown])
        let result = try await runOffPool(try builtProduct("apitrace").path, ["cat", path])
        #expect(result.status == 1)
        #expect(String(decoding: result.stdout, as: UTF8.self) == [header, odd1, odd2].map { $0 + "\n" }.joined())
        let stderr = String(decoding: result.stderr, as: UTF8.self)
        #expect(stderr.contains("\(path):3:") && stderr.contains("missing field \"route\""))
        #expect(stderr.contains("\(path):4:"))
    }

    @Test("filters by time, type, route glob and session; many files keep file order", arguments: [
        ["--type", "request"],
        ["--type", "error,decode_failure"],
        ["--route", "/apps/*"],
        ["--route", "/news"],
        ["--session", "s-3"],
        ["--session", "s-*"],
        ["--since", "2026-11-22T10:20:00Z", "--until", "2026-11-22T10:40:00Z"],
        ["--since", "2026-11-22T10:50:00Z", "--type", "request", "--route", "/apps/{id}"],
        [],
    ])
    func filters(_ options: [String]) async throws {
        let dir = TemporaryDirectory()
        let traffic = Traffic(files: 6, eventsPerFile: 150, seed: 7)
        let paths = try traffic.write(dir)
        let result = try await runOffPool(try builtProduct("apitrace").path, ["cat", "--no-headers"] + options + paths)
        #expect(result.status == 0, "\(String(decoding: result.stderr, as: UTF8.self))")
        let expected = traffic.files.flatMap { $0 }.filter { Self.keeps($0.event, options) }.map(\.line)
        let printed = String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(!expected.isEmpty)
        #expect(printed == expected)
    }

    @Test("headers come before their file's events, in file order, across many files")
    func headersInOrder() async throws {
        let dir = TemporaryDirectory()
        let traffic = Traffic(files: 9, eventsPerFile: 40, seed: 3)
        let paths = try traffic.write(dir)
        let result = try await runOffPool(try builtProduct("apitrace").path, ["cat"] + paths)
        #expect(result.status == 0)
        let expected = zip(traffic.headers, traffic.files).flatMap { [$0] + $1.map(\.line) }
        #expect(String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").map(String.init) == expected)
    }

    @Test("--sort merges overlapping files of several producers in time order")
    func sorted() async throws {
        let dir = TemporaryDirectory()
        let traffic = Traffic(files: 6, eventsPerFile: 120, seed: 11, producers: 3)
        let paths = try traffic.write(dir)
        let result = try await runOffPool(try builtProduct("apitrace").path, ["cat", "--sort", "--type", "request,error,log"] + paths.reversed())
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        // Independent order: every kept line, stably sorted by its parsed time (files in name order).
        let all = traffic.files.flatMap { $0 }.filter { Self.keeps($0.event, ["--type", "request,error,log"]) }
        let expected = all.enumerated().sorted {
            ($0.element.event.timestamp.millisecondsSince1970, $0.offset) < ($1.element.event.timestamp.millisecondsSince1970, $1.offset)
        }.map(\.element.line)
        let printed = String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(printed.count == expected.count)
        #expect(printed == expected)
        // The files really did overlap, so the order came from the merge and not from the names.
        #expect(all.map(\.line) != expected)
    }

    @Test("a bad option names itself and what it expects", arguments: [
        (["--type", "reqest"], "--type reqest"), (["--since", "yesterday"], "--since yesterday"),
    ])
    func badOptions(_ options: [String], _ message: String) async throws {
        let result = try await runOffPool(try builtProduct("apitrace").path, ["cat"] + options + ["/tmp"])
        #expect(result.status != 0)
        #expect(String(decoding: result.stderr, as: UTF8.self).contains(message))
    }

    // MARK: - Fixtures

    /// 2026-11-22T10:00:00Z.
    static let base: Int64 = 1_795_341_600_000
    var base: Int64 { Self.base }

    /// The `jq` meaning of the options, computed from the events themselves.
    static func keeps(_ event: TraceEvent, _ options: [String]) -> Bool {
        var i = 0
        while i < options.count {
            let value = options[i + 1]
            switch options[i] {
            case "--type": if !value.split(separator: ",").contains(Substring(event.type)) { return false }
            case "--route":
                guard let route = event.route else { return false }
                if value.hasSuffix("*") ? !route.hasPrefix(value.dropLast()) : route != value { return false }
            case "--session":
                guard let session = event.session else { return false }
                if value.hasSuffix("*") ? !session.hasPrefix(value.dropLast()) : session != value { return false }
            case "--since": if event.timestamp.millisecondsSince1970 < TraceTimestamp(rfc3339: value)!.millisecondsSince1970 { return false }
            case "--until": if event.timestamp.millisecondsSince1970 >= TraceTimestamp(rfc3339: value)!.millisecondsSince1970 { return false }
            default: Issue.record("unknown option \(options[i])")
            }
            i += 2
        }
        return true
    }

    /// Files of mixed events from an hour from 10:00, one producer's files following each other
    /// in time; events run up to 90 s before their file's start (queued across a rotation).
    struct Traffic {
        var files: [[(event: TraceEvent, line: String)]] = []
        var headers: [String] = []
        var names: [String] = []

        init(files count: Int, eventsPerFile: Int, seed: UInt64, producers: Int = 1) {
            var random = seed
            func next(_ n: Int) -> Int {
                random = random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return Int((random >> 33) % UInt64(n))
            }
            let span = 3_600_000 / Int64(max(1, count / producers))
            let routes = ["/apps/{id}", "/apps", "/news", "/apps/{id}/reviews"]
            for f in 0..<count {
                let producer = "prod\(f % producers)"
                let start = CatCommandTests.base + Int64(f / producers) * span
                var events: [(TraceEvent, String)] = []
                for _ in 0..<eventsPerFile {
                    let t = TraceTimestamp(millisecondsSince1970: start - 90_000 + Int64(next(Int(span) + 90_000)))
                    let session = next(4) == 0 ? nil : "s-\(next(5))"
                    let route = routes[next(routes.count)]
                    let event: TraceEvent
                    switch next(5) {
                    case 0: event = TraceEvent(timestamp: t, session: session, .error(.init(identity: "E\(next(3))", message: "m", route: next(2) == 0 ? route : nil)))
                    case 1: event = TraceEvent(timestamp: t, session: session, .decodeFailure(.init(route: route, entity: "App", kind: .keyNotFound, path: "a", message: "m")))
                    case 2: event = TraceEvent(timestamp: t, session: session, .log(.init(level: "info", message: "hello")))
                    default: event = TraceEvent(timestamp: t, session: session, .request(.init(method: "GET", route: route, status: [200, 404, 503][next(3)], durationMs: Double(next(900)))))
                    }
                    events.append((event, event.jsonLine))
                }
                files.append(events)
                headers.append(TraceFileHeader(producer: producer, started: .init(millisecondsSince1970: start)).jsonLine)
                names.append(TraceFileIdentity(started: .init(millisecondsSince1970: start), producer: producer, sequence: f / producers + 1).fileName)
            }
        }

        /// Writes each file gzipped (by the system's gzip) and returns their paths in order.
        func write(_ dir: TemporaryDirectory) throws -> [String] {
            try files.indices.map { i in
                try writeGzip(dir, String(names[i].dropLast(".jsonl.gz".count)), [headers[i]] + files[i].map(\.line))
            }
        }
    }
}

extension TraceEvent {
    /// The event's route, for the types that carry one.
    fileprivate var route: String? {
        switch payload {
        case .request(let r): r.route
        case .decodeFailure(let d): d.route
        case .error(let e): e.route
        case .sse(let s): s.route
        default: nil
        }
    }
}

/// Writes lines to `<stem>.jsonl` and compresses it with the system's gzip; returns the `.jsonl.gz` path.
private func writeGzip(_ dir: TemporaryDirectory, _ stem: String, _ lines: [String]) throws -> String {
    let plain = dir.file(stem + ".jsonl")
    try Data(lines.map { $0 + "\n" }.joined().utf8).write(to: URL(fileURLWithPath: plain))
    let result = try run("/usr/bin/env", ["gzip", "-f", plain])
    guard result.status == 0 else { throw CocoaError(.fileWriteUnknown) }
    return plain + ".gz"
}
