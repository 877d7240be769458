import APITraceTestSupport
import APITraceServerTestSupport
import APITraceFormat
import APITraceUpload
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The fleet's time to page, end to end: 20 simulated devices, each a real `TraceFileWriter` and
/// `TraceUploader` in this process with the library's defaults (its own folder and producer; only
/// the collector's URL is given), upload to the built `apitrace collect` (a child process); a real
/// Prometheus scrapes its `/metrics` with the rules of `apitrace rules --format prometheus`, and a
/// real Alertmanager delivers to this test's webhook receiver.
///
/// Time is compressed only where the components allow it: Prometheus scrapes and evaluates every
/// second, Alertmanager groups within a second, and the rule's windows are written short in the
/// test's rules file (2 m / 30 s). The devices keep the defaults: a 60 s segment cadence, 2 s
/// minimumFileAge, 30 s scan, 1 s to 5 min backoff. The collector is SIGKILLed and restarted on the
/// same folder and port mid-test: uploads fail meanwhile and are sent again. Half the devices go
/// through a relay (a Python child process) that drops three receipts of stored segments: those are
/// sent again and counted once.
@Suite(.serialized) struct FleetTimeToPageTests {
    static let devices = 20
    static let token = "fleet-token"
    /// Routes and their weights: uneven, as an app's are.
    static let routes: [(route: String, method: String, weight: Int)] = [
        ("/feed", "GET", 45), ("/items/{id}", "GET", 25), ("/search", "GET", 15), ("/cart", "POST", 8),
        ("/login", "POST", 4), ("/upload", "PUT", 3),
    ]

    enum Phase: Sendable { case normal, spike, stopped }

    /// One simulated device and what it sent, as the test counts it (independently of apitrace).
    final class Device: @unchecked Sendable {
        let index: Int
        let folder: TemporaryDirectory
        let writer: TraceFileWriter
        let uploader: TraceUploader
        private let lock = NSLock()
        private var counts: [String: Int] = [:]
        private var serverErrors: [String: Int] = [:]
        private var captured: [Int64] = []
        private var deliveries: [(file: String, at: Int64)] = []

        init(index: Int, endpoint: URL) {
            self.index = index
            folder = TemporaryDirectory()
            writer = TraceFileWriter(configuration: .init(directory: folder.path, producer: String(format: "dev%05d", index), app: "shop"))
            var configuration = TraceUploader.Configuration(writer: writer, endpoint: endpoint, token: FleetTimeToPageTests.token)
            // Observation only (when each file was confirmed), for the latency figures; no behaviour changes.
            let deliveries = Locked<[(String, Int64)]>([])
            configuration.onEvent = { event in
                if case .delivered(let file, _, _) = event { deliveries.withLock { $0.append((file, TraceTimestamp.now().millisecondsSince1970)) } }
            }
            uploader = TraceUploader(configuration: configuration)
            delivered = deliveries
        }

        let delivered: Locked<[(String, Int64)]>

        /// Captures one request as an app's tracer would: a timestamped event to the writer.
        func capture(route: String, method: String, status: Int?, error: String?, attempt: Int) {
            let now = TraceTimestamp.now()
            writer.append(TraceEvent(
                timestamp: now,
                .request(.init(method: method, route: route, host: "api.shop.example", status: status,
                               durationMs: Double.random(in: 20...900), error: error, attempt: attempt))))
            lock.withLock {
                counts[route, default: 0] += 1
                if let status, status >= 500 { serverErrors[route, default: 0] += 1 }
                captured.append(now.millisecondsSince1970)
            }
        }

        var sentCounts: [String: Int] { lock.withLock { counts } }
        var sentServerErrors: [String: Int] { lock.withLock { serverErrors } }
        var captureTimes: [Int64] { lock.withLock { captured } }
    }

    /// Realistic traffic on one device until the phase is `.stopped`: about 2 requests a second,
    /// routes by weight, mostly 2xx, some 4xx, cancellations, a 5xx retried once; in the spike 40% 5xx.
    static func traffic(_ device: Device, phase: Locked<Phase>) async {
        var generator = SystemRandomNumberGenerator()
        let total = routes.reduce(0) { $0 + $1.weight }
        while true {
            let current = phase.withLock { $0 }
            if current == .stopped { return }
            var pick = Int.random(in: 0..<total, using: &generator)
            let (route, method, _) = routes.first { pick -= $0.weight; return pick < 0 }!
            for attempt in 1...2 {
                let roll = Double.random(in: 0..<1, using: &generator)
                let failing = current == .spike ? 0.40 : 0.01
                if roll < failing {
                    device.capture(route: route, method: method, status: roll < failing / 2 ? 500 : 503, error: nil, attempt: attempt)
                    continue  // a 5xx is retried once
                } else if roll < failing + 0.04 {
                    device.capture(route: route, method: method, status: [400, 401, 404, 409][Int(roll * 1000) % 4], error: nil, attempt: attempt)
                } else if roll < failing + 0.06 {
                    device.capture(route: route, method: method, status: nil, error: "URLError.cancelled", attempt: attempt)
                } else {
                    device.capture(route: route, method: method, status: method == "POST" ? 201 : 200, error: nil, attempt: attempt)
                }
                break
            }
            try? await Task.sleep(for: .milliseconds(Int.random(in: 250...750, using: &generator)))
        }
    }

    /// The collector's request total as it serves it now (the second of two scrapes: a new series shows 0 first).
    static func collectorTotal(port: Int) async throws -> Double {
        var text = ""
        for _ in 0..<2 { text = try await HTTPClient.request("GET", "http://127.0.0.1:\(port)/metrics").text }
        return text.split(separator: "\n").filter { $0.hasPrefix("apitrace_http_client_requests_total{") }
            .reduce(0) { $0 + (Double($1.split(separator: " ").last ?? "") ?? 0) }
    }

    /// Every sample Prometheus scraped of `metric` in the last `range`, summed per `label` with
    /// counter resets (the collector's restart) taken as Prometheus does, without extrapolation.
    static func scrapedTotals(_ prometheus: RunningPrometheus, _ metric: String, by label: String, range: String = "30m") async throws -> [String: Double] {
        let data = try await prometheus.api("query", query: [URLQueryItem(name: "query", value: "\(metric)[\(range)]")]) as? [String: Any]
        var totals: [String: Double] = [:]
        for series in data?["result"] as? [[String: Any]] ?? [] {
            let labels = series["metric"] as? [String: String] ?? [:]
            let values = (series["values"] as? [[Any]] ?? []).compactMap { Double($0.last as? String ?? "") }
            var total = 0.0, previous = 0.0
            for value in values {
                total += value >= previous ? value - previous : value
                previous = value
            }
            totals[labels[label] ?? "?", default: 0] += total
        }
        return totals
    }

    @Test(.requires(.prometheus, .alertmanager, .promtool, .python3), .timeLimit(.minutes(25)))
    func aFleetWideSpikePagesWithinFiveMinutesAndResolvesWithTheDefaults() async throws {
        let dir = TemporaryDirectory()
        try """
            rules:
              - name: api-errors
                slo: 0.99
                burn_rate: [{long: 2m, short: 30s, factor: 5}]
                recent_window: 30s
                min_requests: 100
                resolve_after: 5s
                severity: error
            """.write(toFile: dir.file("alert-rules.yaml"), atomically: true, encoding: .utf8)
        let rules = try await apitrace(["rules", "--format", "prometheus", "--rules", dir.file("alert-rules.yaml"), "--output", dir.file("rules.yaml")])
        try #require(rules.status == 0, "\(rules.stderr)")
        let check = try await runChild(try #require(OutsideTool.promtool.path), ["check", "rules", dir.file("rules.yaml")])
        try #require(check.status == 0, "promtool: \(check.stdout) \(check.stderr)")

        try "\(Self.token)\n".write(toFile: dir.file("tokens"), atomically: true, encoding: .utf8)
        let port = try freePort()
        let collectArguments = ["collect", "--listen", "127.0.0.1:\(port)", "--dir", dir.file("store"), "--token-file", dir.file("tokens")]
        let collectors = Locked([try ChildProcess(try builtProduct("apitrace").path, collectArguments)])
        defer { for collector in collectors.withLock({ $0 }) { collector.stop() } }
        try await collectors.withLock { $0[0] }.waitUntilReady(URL(string: "http://127.0.0.1:\(port)/health")!)

        // Half the fleet reaches the collector through a relay that can lose receipts.
        let relay = try await ReceiptLosingRelay.start(python: try #require(OutsideTool.python3.path), collectorPort: port)
        defer { relay.stop() }
        let endpoints = [relay.uploadURL, URL(string: "http://127.0.0.1:\(port)/v1/traces")!]

        try await Receiver.with { receiver in
            let am = try await RunningAlertmanager.start(binary: try #require(OutsideTool.alertmanager.path), webhook: receiver.url("/hook"), in: dir)
            defer { am.stop() }
            let prometheus = try await RunningPrometheus.start(
                binary: try #require(OutsideTool.prometheus.path), ruleFiles: [dir.file("rules.yaml")], targets: ["127.0.0.1:\(port)"],
                alertmanagers: ["127.0.0.1:\(am.port)"], in: dir)
            defer { prometheus.stop() }

            let clock = ContinuousClock()
            let began = clock.now
            let phase = Locked(Phase.normal)
            let devices = (0..<Self.devices).map { Device(index: $0, endpoint: endpoints[$0 % 2]) }
            // Devices come up over a minute, as a fleet's do, so their segments do not arrive in step.
            let traffic = Task {
                await withTaskGroup(of: Void.self) { group in
                    for device in devices {
                        group.addTask {
                            try? await Task.sleep(for: .seconds(3 * device.index))
                            device.uploader.start()
                            await Self.traffic(device, phase: phase)
                        }
                    }
                }
            }

            // The collector is SIGKILLed and restarted on the same folder and port. The devices are
            // paused first and Prometheus' last scrape awaited, so the total before the restart is
            // known; the restarted collector (same instance id, `<host>-<port>`) takes its counters
            // back from `.collectors/` (a kill in mid-upload is CollectDurableCountersTests' case).
            // Meanwhile the devices upload into the void, then send again.
            // At 75 s the first devices have sent their first minute.
            try await clock.sleep(until: began.advanced(by: .seconds(75)))
            for device in devices { device.uploader.pause() }
            try await Task.sleep(for: .seconds(1))
            let counted = try await Self.collectorTotal(port: port)
            #expect(counted > 0, "the first devices' first segments reached the collector")
            try await Self.poll("Prometheus to scrape the collector's \(counted) requests before the restart") {
                try await prometheus.query("sum(apitrace_http_client_requests_total)").first?.value ?? 0 == counted
            }
            try await collectors.withLock { $0[0] }.kill()
            for device in devices { device.uploader.resume() }
            // Three devices go to the background while the collector is down: their segments fail now and go later.
            for device in devices.prefix(3) { await device.uploader.finishAndSend() }
            try await Task.sleep(for: .seconds(6))
            let retriesWhileDown = devices.reduce(0) { $0 + $1.uploader.statistics.retries }
            #expect(retriesWhileDown >= 3, "uploads failed while the collector was down")
            let restarted = try ChildProcess(try builtProduct("apitrace").path, collectArguments)
            collectors.withLock { $0.append(restarted) }
            try await restarted.waitUntilReady(URL(string: "http://127.0.0.1:\(port)/health")!)

            // Three segments the collector stores lose their receipts on the way back: sent again, counted once.
            try await clock.sleep(until: began.advanced(by: .seconds(95)))
            try await relay.loseReceipts(3)

            // Normal traffic until the spike, every device sending its minutes: nothing pages.
            try await clock.sleep(until: began.advanced(by: .seconds(130)))
            #expect(receiver.requests(to: "/hook").isEmpty, "paged on normal traffic")

            // A 40% 5xx spike across the fleet, from a known instant.
            let spikeStart = clock.now
            phase.withLock { $0 = .spike }
            let firing = try await receiver.waitForHook(status: "firing", seconds: 300)
            let firingAt = try #require(receiver.requests(to: "/hook").first { $0.json["status"] as? String == "firing" }).at
            let timeToPage = spikeStart.duration(to: firingAt)
            let page = try #require((firing["alerts"] as? [[String: Any]])?.first)
            #expect((page["labels"] as? [String: String])?["alertname"] == "api-errors")
            #expect(timeToPage < .seconds(300), "paged \(timeToPage) after the spike began")

            // The spike lasts at least 90 s, then the fleet recovers.
            try await clock.sleep(until: spikeStart.advanced(by: .seconds(90)))
            let spikeEnd = clock.now
            phase.withLock { $0 = .normal }
            _ = try await receiver.waitForHook(status: "resolved", seconds: 900)
            let resolvedAt = try #require(receiver.requests(to: "/hook").first { $0.json["status"] as? String == "resolved" }).at
            let timeToResolve = spikeEnd.duration(to: resolvedAt)
            #expect(timeToResolve < .seconds(900), "resolved \(timeToResolve) after the spike ended")
            #expect(receiver.requests(to: "/hook").compactMap { $0.json["status"] as? String } == ["firing", "resolved"])

            // Traffic stops; every device sends its last segment (as on going to the background).
            phase.withLock { $0 = .stopped }
            await traffic.value
            await withTaskGroup(of: Void.self) { group in
                for device in devices { group.addTask { await device.uploader.finishAndSend() } }
            }
            try await waitUntil("every device's folder to drain", seconds: 600) {
                devices.allSatisfy { $0.folder.traceFiles.isEmpty && $0.writer.activeFilePath == nil }
            }
            let finalCount = try await Self.collectorTotal(port: port)
            try await Self.poll("Prometheus to scrape the collector's final \(finalCount) requests") {
                try await prometheus.query("sum(apitrace_http_client_requests_total)").first?.value == finalCount
            }
            let elapsed = began.duration(to: clock.now)
            let lost = try await relay.lostReceipts()
            #expect(lost == 3)
            let duplicates = try await prometheus.query("apitrace_collector_files_duplicate_total").first?.value ?? 0
            #expect(duplicates >= 3, "the segments whose receipts were lost were sent again and found already stored")
            for device in devices { await device.uploader.stop(); device.writer.close() }

            // Prometheus holds exactly what the devices sent, per route and per route's 5xx: none lost
            // across the failed uploads and the restart, none doubled by a re-send.
            var sent: [String: Double] = [:], sentServerErrors: [String: Double] = [:]
            for device in devices {
                for (route, count) in device.sentCounts { sent[route, default: 0] += Double(count) }
                for (route, count) in device.sentServerErrors { sentServerErrors[route, default: 0] += Double(count) }
                #expect(device.writer.statistics.droppedBufferFull == 0 && device.writer.statistics.droppedWriteFailed == 0)
            }
            #expect(try await Self.scrapedTotals(prometheus, "apitrace_http_client_requests_total", by: "url_template") == sent)
            #expect(try await Self.scrapedTotals(
                prometheus, #"apitrace_http_client_requests_total{outcome="server_error"}"#, by: "url_template") == sentServerErrors)
            #expect(Set(sent.keys) == Set(Self.routes.map(\.route)))

            // Figures: capture-to-collector latency per event (the delivery of the file that holds it,
            // found by the files' start times; a file's name has whole seconds, so an event in the
            // second a segment was cut may be charged the next segment's delivery: an overestimate).
            var latencies: [Double] = []
            var deliveries = 0
            for device in devices {
                let files = device.delivered.withLock { $0 }.compactMap { delivered -> (start: Int64, at: Int64)? in
                    guard let name = TraceFileIdentity(fileName: delivered.0) else { return nil }
                    return (name.started.millisecondsSince1970, delivered.1)
                }.sorted { $0.start < $1.start }
                deliveries += files.count
                for captured in device.captureTimes {
                    guard let file = files.last(where: { $0.start <= captured }) else { continue }
                    latencies.append(Double(file.at - captured) / 1000)
                }
            }
            latencies.sort()
            let median = latencies[latencies.count / 2], p95 = latencies[latencies.count * 95 / 100]
            let perDeviceHour = Double(deliveries) / Double(devices.count) / (elapsed.inSeconds / 3600)
            print("""
                fleet: \(devices.count) devices, \(Int(sent.values.reduce(0, +))) requests in \(Int(elapsed.inSeconds)) s, \
                \(deliveries) uploads (\(Int(perDeviceHour.rounded())) per device per hour), \(retriesWhileDown) failed while the collector was down
                fleet: capture-to-collector latency median \(String(format: "%.1f", median)) s, p95 \(String(format: "%.1f", p95)) s, max \(String(format: "%.1f", latencies.last!)) s
                fleet: time to page \(String(format: "%.1f", timeToPage.inSeconds)) s after the spike began, \
                resolved \(String(format: "%.1f", timeToResolve.inSeconds)) s after it ended
                """)
            #expect(p95 < 120, "what the devices captured reached the collector within two minutes (p95 \(p95) s)")
        }
    }

    /// Polls an async condition every 200 ms until it holds.
    static func poll(_ what: String, seconds: Double = 120, _ condition: () async throws -> Bool) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while try await !condition() {
            if Date() > deadline { throw TimedOut(description: "timed out after \(seconds) s waiting for \(what)") }
            try await Task.sleep(for: .milliseconds(200))
        }
    }
}
