import APITraceTestSupport
import APITraceCollectorTestSupport
import Foundation
import Testing

/// SIGTERM to a real `apitrace collect` child with slow clients attached.
@Suite("Collector shutdown")
struct CollectorShutdownTests {
    static let token = "secret-token"

    @Test("SIGTERM with dribbling bodies, a half-sent head and an idle connection attached: the collector exits within a few seconds, what it stored intact")
    func sigtermDrainsQuickly() async throws {
        let dir = TemporaryDirectory()
        let store = dir.file("store")
        // Long deadlines and no minimum rate: only the shutdown may cut the slow clients.
        let collector = try ChildProcess(try builtProduct("apitrace").path, [
            "collect", "--listen", "127.0.0.1:0", "--dir", store, "--token-env", "COLLECT_TOKEN",
            "--header-timeout", "5m", "--body-idle-timeout", "5m", "--body-timeout", "10m", "--min-body-rate", "0",
        ], environment: ["COLLECT_TOKEN": Self.token])
        defer { collector.stop() }
        let line = try await collector.waitForLine("the listening line") { $0.contains("listening on http://") }
        let port = try #require(line.split(separator: ":").last.flatMap { Int($0.prefix { $0.isNumber }) })
        let body = TraceFiles.make(producer: "kept", events: TraceFiles.requests(800, seed: 4))
        let stored = try await HTTPClient.upload("http://127.0.0.1:\(port)/v1/traces", body)
        #expect(stored.status == 201)

        // Three bodies dribbled a byte every 500 ms, one head cut in the middle, one connection never used.
        let stopDribbling = Flag()
        let dribblers = (0..<3).map { _ in
            Task {
                try await offPool { () -> Bool in
                    let connection = try RawConnection(port: port)
                    connection.send("POST /v1/traces HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(Self.token)\r\nContent-Length: \(64 << 20)\r\n\r\n")
                    while !stopDribbling.isSet {
                        guard connection.send([0x1F]) else { return true }
                        for _ in 0..<10 where !connection.isClosedByServer { usleep(50_000) }
                        if connection.isClosedByServer { return true }
                    }
                    return false
                }
            }
        }
        let others = try await offPool { () -> [RawConnection] in
            let half = try RawConnection(port: port)
            half.send("POST /v1/traces HTTP/1.1\r\nHost: x\r\nAuthor")
            return [half, try RawConnection(port: port)]
        }
        try await Task.sleep(for: .seconds(2))
        #expect(collector.isRunning)

        let signalled = Date()
        kill(collector.process.processIdentifier, SIGTERM)
        // The budget: the 2 s grace plus a loaded machine; on main the child waited for the 10 min body deadline.
        let exited: Bool
        do {
            try await collector.waitForExit(seconds: 15)
            exited = true
        } catch {
            exited = false
        }
        let seconds = Date().timeIntervalSince(signalled)
        stopDribbling.set()
        #expect(exited, "apitrace collect still runs \(seconds) s after SIGTERM")
        if exited { #expect(collector.process.terminationStatus == 0, "\(collector.standardError)") }
        for dribbler in dribblers {
            #expect(try await dribbler.value, "a dribbling client was never disconnected")
        }
        withExtendedLifetime(others) {}

        // What was stored is intact, and no temporary file is left.
        let files = TraceFiles.allFiles(under: store)
        #expect(files.count == 1 && files.allSatisfy { $0.hasSuffix(".jsonl.gz") && !$0.contains("/.upload-") }, "\(files)")
        #expect(Set(TraceFiles.stored(under: store).keys) == [TraceFiles.sha256Hex(body)])
    }
}

/// A flag set once from one thread and read from others.
private final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
