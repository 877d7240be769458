import APITraceTestSupport
import APITraceCollectorTestSupport
import APITraceCollector
import APITraceFormat
import Foundation
import Testing

/// The collector against slow and many clients: raw sockets that dribble a header or a body, and
/// 200 uploads at once against small bounds.
@Suite("Collector limits")
struct CollectorLimitsTests {
    static let token = "secret-token"

    /// Each deadline test makes the other deadlines long, so that on a loaded machine only the one under test can fire.
    static func start(
        _ dir: TemporaryDirectory, maxUploads: Int = 64, maxBytes: Int = 256 << 20, maxBody: Int = 1 << 20,
        headerTimeout: Duration = .seconds(1), bodyIdleTimeout: Duration = .seconds(30), bodyTimeout: Duration = .seconds(60),
        minBodyBytesPerSecond: Int = 1024, bodyRateWindow: Duration = .seconds(30)
    ) async throws -> RunningCollector {
        try await RunningCollector.start(try TraceCollector(configuration: .init(
            directory: dir.path, tokens: [token], maxBodyBytes: maxBody, maxConcurrentUploads: maxUploads, maxBytesInFlight: maxBytes,
            busyRetryAfterSeconds: 1, headerTimeout: headerTimeout, bodyIdleTimeout: bodyIdleTimeout,
            minBodyBytesPerSecond: minBodyBytesPerSecond, bodyRateWindow: bodyRateWindow, bodyTimeout: bodyTimeout)))
    }

    /// Runs blocking socket work on a thread of its own, not on the cooperative pool the server needs.
    static func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
        }
    }

    @Test("a connection that sends half a header line is closed at the header deadline")
    func halfHeaderLine() async throws {
        let dir = TemporaryDirectory()
        let server = try await Self.start(dir)
        defer { Task { await server.stop() } }
        let closed = try await Self.offPool {
            let connection = try RawConnection(port: server.port)
            connection.send("POST /v1/tra")
            return connection.readUntilClosed(seconds: 20).closed
        }
        #expect(closed)
        #expect(server.collector.metrics.snapshot.timedOut == 1)
        let metrics = try await HTTPClient.request("GET", server.baseURL + "/metrics")
        #expect(metrics.text.contains("apitrace_collector_connections_timed_out_total{phase=\"header\"} 1\n"), "\(metrics.text)")
    }

    @Test("a connection that never sends a byte, or is left idle after an upload, is closed and counted as idle")
    func idleConnections() async throws {
        let dir = TemporaryDirectory()
        let server = try await Self.start(dir)
        defer { Task { await server.stop() } }
        let body = TraceFiles.make(producer: "idle", events: TraceFiles.requests(10, seed: 1))
        let (silentClosed, keptAliveClosed, answer) = try await Self.offPool { () -> (Bool, Bool, String) in
            let silent = try RawConnection(port: server.port)
            let used = try RawConnection(port: server.port)
            used.send("POST /v1/traces HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(Self.token)\r\nContent-Length: \(body.count)\r\n\r\n")
            used.send(body)
            let usedResult = used.readUntilClosed(seconds: 20)
            return (silent.readUntilClosed(seconds: 20).closed, usedResult.closed, String(decoding: usedResult.bytes, as: UTF8.self))
        }
        #expect(silentClosed && keptAliveClosed)
        #expect(answer.hasPrefix("HTTP/1.1 201"), "\(answer)")
        let metrics = try await HTTPClient.request("GET", server.baseURL + "/metrics")
        #expect(metrics.text.contains("apitrace_collector_connections_timed_out_total{phase=\"idle\"} 2\n"), "\(metrics.text)")
        #expect(metrics.text.contains("apitrace_collector_connections_timed_out_total{phase=\"header\"} 0\n"))
    }

    @Test("a header dribbled a byte every 100 ms is closed at the deadline, though bytes keep coming")
    func dribbledHeader() async throws {
        let dir = TemporaryDirectory()
        let server = try await Self.start(dir)
        defer { Task { await server.stop() } }
        let (closed, sent) = try await Self.offPool { () -> (Bool, Int) in
            let connection = try RawConnection(port: server.port)
            let head = Array("POST /v1/traces HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(Self.token)\r\nX-Padding: \(String(repeating: "a", count: 400))\r\n".utf8)
            var sent = 0
            for byte in head {
                guard connection.send([byte]) else { return (true, sent) }
                sent += 1
                usleep(100_000)
                if connection.isClosedByServer { return (true, sent) }
            }
            return (false, sent)
        }
        #expect(closed, "the server read the whole dribbled header (\(sent) bytes) without closing")
        #expect(sent < 200)
        let metrics = try await HTTPClient.request("GET", server.baseURL + "/metrics")
        #expect(metrics.text.contains("apitrace_collector_connections_timed_out_total{phase=\"header\"} 1\n"), "\(metrics.text)")
    }

    @Test("a body that stalls after one byte is cut off; nothing is stored and its memory is given back")
    func stalledBody() async throws {
        let dir = TemporaryDirectory()
        let server = try await Self.start(dir, headerTimeout: .seconds(30), bodyIdleTimeout: .seconds(1))
        defer { Task { await server.stop() } }
        let closed = try await Self.offPool {
            let connection = try RawConnection(port: server.port)
            connection.send("POST /v1/traces HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(Self.token)\r\nContent-Length: 5000\r\n\r\n")
            connection.send([0x1F])
            return connection.readUntilClosed(seconds: 20).closed
        }
        #expect(closed)
        try await waitUntil("the upload to be given up") { server.collector.metrics.openMetricsText.contains("apitrace_collector_uploads_in_flight 0\n") }
        #expect(TraceFiles.allFiles(under: dir.path).isEmpty)
        let metrics = try await HTTPClient.request("GET", server.baseURL + "/metrics")
        #expect(metrics.text.contains("apitrace_collector_connections_timed_out_total{phase=\"body_idle\"} 1\n"), "\(metrics.text)")
        #expect(metrics.text.contains("apitrace_collector_in_flight_bytes 0\n"))
    }

    @Test("a body dribbled a byte every 200 ms (never idle for 30 s) is cut off at the 3 s body deadline")
    func dribbledBody() async throws {
        let dir = TemporaryDirectory()
        let server = try await Self.start(dir, headerTimeout: .seconds(30), bodyTimeout: .seconds(3))
        defer { Task { await server.stop() } }
        let (closed, sent) = try await Self.offPool { () -> (Bool, Int) in
            let connection = try RawConnection(port: server.port)
            connection.send("POST /v1/traces HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(Self.token)\r\nContent-Length: 500\r\n\r\n")
            for sent in 0..<500 {
                guard connection.send([0x1F]) else { return (true, sent) }
                usleep(200_000)
                if connection.isClosedByServer { return (true, sent + 1) }
            }
            return (false, 500)
        }
        #expect(closed)
        // 3 s at 5 bytes a second: about 15 bytes, far from the 500 announced.
        #expect(sent < 100)
        let metrics = try await HTTPClient.request("GET", server.baseURL + "/metrics")
        #expect(metrics.text.contains("apitrace_collector_connections_timed_out_total{phase=\"body\"} 1\n"), "\(metrics.text)")
    }

    @Test("finishing a cut body counts its second copy against the byte bound: with room for one body only, a cut body is answered 503")
    func cutBodyNeedsRoomForItsCopy() async throws {
        let dir = TemporaryDirectory()
        let whole = TraceFiles.make(producer: "room", events: TraceFiles.requests(3000, seed: 5))
        let cut = Array(whole.dropLast(100))
        let server = try await Self.start(dir, maxBytes: whole.count + 10, maxBody: whole.count + 10)
        defer { Task { await server.stop() } }
        let refused = try await HTTPClient.upload(server.uploadURL, cut)
        #expect(refused.status == 503 && refused.headers["retry-after"] == "1", "\(refused.status) \(refused.text)")
        #expect(TraceFiles.allFiles(under: dir.path).isEmpty)
        let stored = try await HTTPClient.upload(server.uploadURL, whole)
        #expect(stored.status == 201)
        #expect(server.collector.metrics.snapshot.peakBytesInFlight <= whole.count + 10)
    }

    @Test("200 concurrent uploads against bounds of 8 uploads and 6 bodies' bytes: 503 with Retry-After beyond them, every file stored once, the bounds held")
    func twoHundredConcurrentUploads() async throws {
        let dir = TemporaryDirectory()
        let bodies = (0..<200).map { TraceFiles.make(producer: "fleet\($0)", events: TraceFiles.requests(300, seed: $0)) }
        let largest = bodies.map(\.count).max()!
        let byteBound = max(6 * largest, 1 << 20)
        let server = try await Self.start(dir, maxUploads: 8, maxBytes: byteBound, headerTimeout: .seconds(30))
        defer { Task { await server.stop() } }
        let busySeen = Recorded<String>()
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for body in bodies {
                group.addTask {
                    // An uploader's loop: 503 means wait Retry-After and send again.
                    for _ in 0..<200 {
                        let answer = try await HTTPClient.upload(server.uploadURL, body)
                        guard answer.status == 503 else { return answer.status }
                        busySeen.append(answer.headers["retry-after"] ?? "none")
                        try await Task.sleep(for: .milliseconds(Int.random(in: 50...400)))
                    }
                    return 503
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 201, count: 200))
        #expect(!busySeen.all.isEmpty, "no upload was ever refused: the bounds were not exercised")
        #expect(busySeen.all.allSatisfy { $0 == "1" })
        let stored = TraceFiles.stored(under: dir.path)
        #expect(Set(stored.keys) == Set(bodies.map(TraceFiles.sha256Hex)))
        #expect(stored.values.allSatisfy { $0.count == 1 })
        let snapshot = server.collector.metrics.snapshot
        #expect(snapshot.accepted == 200 && snapshot.duplicates == 0)
        #expect(snapshot.busy == busySeen.all.count)
        #expect(snapshot.peakUploadsInFlight <= 8 && snapshot.peakUploadsInFlight >= 2)
        #expect(snapshot.peakBytesInFlight <= byteBound)
    }

    /// A client holding the valid token that announces `length` and drips one byte every `every`
    /// seconds until the server closes the connection; returns the seconds it was kept and the bytes it sent.
    static func drip(port: Int, announcing length: Int, every: Double, for seconds: Double) throws -> (kept: Double, sent: Int, closed: Bool) {
        let connection = try RawConnection(port: port)
        let started = Date()
        connection.send("POST /v1/traces HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\nContent-Length: \(length)\r\n\r\n")
        var sent = 0
        while Date().timeIntervalSince(started) < seconds {
            guard connection.send([0x1F]) else { return (Date().timeIntervalSince(started), sent, true) }
            sent += 1
            let next = Date().addingTimeInterval(every)
            while Date() < next {
                if connection.isClosedByServer { return (Date().timeIntervalSince(started), sent, true) }
                usleep(50_000)
            }
        }
        return (Date().timeIntervalSince(started), sent, false)
    }

    @Test("four clients with the token announcing 64 MiB and dripping a byte every 10 s do not lock out an honest upload, and are cut off by the minimum rate")
    func drippersDoNotLockOut() async throws {
        let dir = TemporaryDirectory()
        // The shipped bounds (64 MiB bodies, 256 MiB in flight: four announced bodies fill it when
        // announced bytes are counted); only the rate window is shortened, and the other deadlines
        // are long so that only the rate can cut the drippers.
        let server = try await Self.start(
            dir, maxBody: 64 << 20, headerTimeout: .seconds(30), bodyIdleTimeout: .seconds(120), bodyTimeout: .seconds(300),
            bodyRateWindow: .seconds(15))
        defer { Task { await server.stop() } }
        // 15 s windows: the four must be in flight together, and on a loaded machine their threads
        // may start seconds apart.
        let drippers = (0..<4).map { _ in
            Task { try await Self.offPool { try Self.drip(port: server.port, announcing: 64 << 20, every: 10, for: 60) } }
        }
        try await waitUntil("the four drippers to be admitted", seconds: 60) { server.collector.metrics.snapshot.peakUploadsInFlight >= 4 }
        let body = TraceFiles.make(producer: "honest", events: TraceFiles.requests(500, seed: 9))
        let honest = try await HTTPClient.upload(server.uploadURL, body)
        #expect(honest.status == 201, "an honest upload was refused while four drippers held the collector: \(honest.status) \(honest.text)")
        #expect(TraceFiles.stored(under: dir.path).keys.contains(TraceFiles.sha256Hex(body)))
        for dripper in drippers {
            let (kept, sent, closed) = try await dripper.value
            #expect(closed, "a dripper was kept for \(kept) s")
            // The 15 s window, its check and a loaded machine: far below the 120 s idle and 300 s body deadlines.
            #expect(kept < 60 && sent <= 6, "kept \(kept) s, \(sent) bytes sent")
        }
        try await waitUntil("the drippers' shares to be given back") { server.collector.metrics.openMetricsText.contains("apitrace_collector_uploads_in_flight 0\n") }
        let metrics = try await HTTPClient.request("GET", server.baseURL + "/metrics")
        #expect(metrics.text.contains("apitrace_collector_connections_timed_out_total{phase=\"body_rate\"} 4\n"), "\(metrics.text)")
        #expect(metrics.text.contains("apitrace_collector_in_flight_bytes 0\n"))
        // Bytes received, not announced, were held: four drips and one honest body.
        #expect(server.collector.metrics.snapshot.peakBytesInFlight < body.count + 100)
    }

    @Test("clients that announce more than they send hold only what they sent: sixteen of them announcing 64 MiB leave the 256 MiB bound open")
    func announcedBytesAreNotHeld() async throws {
        let dir = TemporaryDirectory()
        let server = try await Self.start(dir, maxBody: 64 << 20, headerTimeout: .seconds(30), bodyIdleTimeout: .seconds(120), bodyTimeout: .seconds(300))
        defer { Task { await server.stop() } }
        let liars = try await Self.offPool { () -> [RawConnection] in
            try (0..<16).map { _ in
                let connection = try RawConnection(port: server.port)
                connection.send("POST /v1/traces HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(Self.token)\r\nContent-Length: \(64 << 20)\r\n\r\n")
                connection.send([0x1F, 0x8B] + [UInt8](repeating: 0, count: 4094))
                return connection
            }
        }
        try await waitUntil("the sixteen to be admitted", seconds: 60) { server.collector.metrics.snapshot.peakUploadsInFlight >= 16 }
        let body = TraceFiles.make(producer: "honest", events: TraceFiles.requests(500, seed: 10))
        let honest = try await HTTPClient.upload(server.uploadURL, body)
        #expect(honest.status == 201, "\(honest.status) \(honest.text)")
        #expect(server.collector.metrics.snapshot.peakBytesInFlight <= 16 * 4096 + body.count)
        withExtendedLifetime(liars) {}
    }

    @Test("an honest body sent slowly but above the minimum rate (8 KiB/s against 1 KiB/s over 5 s windows) is stored")
    func slowHonestBodyIsStored() async throws {
        let dir = TemporaryDirectory()
        let server = try await Self.start(dir, headerTimeout: .seconds(30), bodyRateWindow: .seconds(5))
        defer { Task { await server.stop() } }
        let body = TraceFiles.make(producer: "slow", events: TraceFiles.requests(16000, seed: 11))
        let answer = try await Self.offPool { () -> String in
            let connection = try RawConnection(port: server.port)
            connection.send("POST /v1/traces HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(Self.token)\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n")
            var offset = 0
            while offset < body.count {
                let end = min(body.count, offset + 1024)
                guard connection.send(Array(body[offset..<end])) else { break }
                offset = end
                usleep(125_000)
            }
            return String(decoding: connection.readUntilClosed(seconds: 30).bytes, as: UTF8.self)
        }
        #expect(body.count > 2 * 5 * (8 << 10), "the body must span several rate windows")
        #expect(answer.hasPrefix("HTTP/1.1 201"), "\(answer)")
        #expect(server.collector.metrics.snapshot.timedOut == 0)
    }

    @Test("with every slot held by dribblers (4 slots, 4 clients dripping a byte a second, rate window 60 s), honest uploads take the slowest one's slot at once; that one is answered 503")
    func slowUploadsLoseTheirSlots() async throws {
        let dir = TemporaryDirectory()
        let server = try await Self.start(
            dir, maxUploads: 4, maxBody: 64 << 20, headerTimeout: .seconds(60), bodyIdleTimeout: .seconds(120), bodyTimeout: .seconds(300),
            bodyRateWindow: .seconds(60))
        defer { Task { await server.stop() } }
        let answers = Recorded<String>(), honestDone = Recorded<Date>()
        let drippers = (0..<4).map { _ in
            Task {
                try await Self.offPool {
                    let connection = try RawConnection(port: server.port)
                    connection.send("POST /v1/traces HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(Self.token)\r\nContent-Length: \(64 << 20)\r\n\r\n")
                    // A byte a second until the collector answers, or 3 s after the honest uploads ended
                    // (at most 120 s: the drippers may take a while to be admitted on a loaded machine).
                    for _ in 0..<120 {
                        if let done = honestDone.all.first, Date().timeIntervalSince(done) > 3 { return }
                        guard connection.send([0x1F]) else { return }
                        let (bytes, closed) = connection.readUntilClosed(seconds: 1)
                        if !bytes.isEmpty { answers.append(String(decoding: bytes, as: UTF8.self)) }
                        if !bytes.isEmpty || closed { return }
                    }
                }
            }
        }
        try await waitUntil("the four dribblers to hold every slot", seconds: 60) { server.collector.metrics.openMetricsText.contains("apitrace_collector_uploads_in_flight 4\n") }
        // Judged after a second of reading.
        try await Task.sleep(for: .milliseconds(1500))
        let body = TraceFiles.make(producer: "honest", events: TraceFiles.requests(500, seed: 12))
        let honest = try await HTTPClient.upload(server.uploadURL, body)
        #expect(honest.status == 201, "\(honest.status) \(honest.text)")
        let second = try await HTTPClient.upload(server.uploadURL, TraceFiles.make(producer: "honest2", events: TraceFiles.requests(500, seed: 13)))
        #expect(second.status == 201, "\(second.status) \(second.text)")
        honestDone.append(Date())
        for dripper in drippers { try await dripper.value }
        #expect(answers.all.count >= 1 && answers.all.allSatisfy { $0.hasPrefix("HTTP/1.1 503") && $0.contains("too slow") }, "\(answers.all)")
        let metrics = try await HTTPClient.request("GET", server.baseURL + "/metrics")
        #expect(metrics.text.contains("apitrace_collector_uploads_busy_total{bound=\"preempted\"} \(answers.all.count)\n"), "\(metrics.text)")
    }
}
