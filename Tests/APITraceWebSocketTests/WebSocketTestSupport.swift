import APITraceCapture
import APITraceFormat
import APITraceTesting
import APITraceWebSocket
import Foundation
import Testing

/// A connection to `url`, tracing into `traces`, with short delays so tests run fast.
func makeConnection(
    _ url: URL, traces: TestTracer, configure: (inout WebSocketConnection.Configuration) -> Void = { _ in }
) -> WebSocketConnection {
    var configuration = WebSocketConnection.Configuration(
        url: url,
        reconnect: WebSocketReconnectPolicy(initialDelay: .milliseconds(40), maximumDelay: .milliseconds(200), minimumDelay: .milliseconds(10)),
        tracer: traces.tracer)
    configure(&configuration)
    return WebSocketConnection(configuration: configuration)
}

/// Every event until the sequence ends, and the error it ended with; `stop` may end it early by
/// returning `true` (the connection is then closed with 1000). Fails the test after `seconds`.
func collect(
    _ connection: WebSocketConnection, seconds: Double = 120,
    onEvent: @escaping @Sendable (WebSocketEvent, WebSocketConnection) async -> Bool = { _, _ in false }
) async throws -> (events: [WebSocketEvent], error: (any Error)?) {
    try await withThrowingTaskGroup(of: ([WebSocketEvent], (any Error)?)?.self) { group in
        group.addTask {
            var events: [WebSocketEvent] = []
            do {
                for try await event in connection.events() {
                    events.append(event)
                    if await onEvent(event, connection) { await connection.close() }
                }
                return (events, nil)
            } catch {
                return (events, error)
            }
        }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            return nil
        }
        let first = try await group.next()!
        group.cancelAll()
        guard let first else {
            await connection.close()
            throw TimedOutWaiting(seconds: seconds)
        }
        return first
    }
}

struct TimedOutWaiting: Error, CustomStringConvertible {
    let seconds: Double
    var description: String { "the connection's events did not end within \(seconds) s" }
}

extension [WebSocketEvent] {
    var texts: [String] { compactMap { if case .text(let t) = $0 { t } else { nil } } }
    var closes: [WebSocketClose] { compactMap { if case .disconnected(let c) = $0 { c } else { nil } } }
    var reconnects: [Int] { compactMap { if case .reconnecting(let attempt, _) = $0 { attempt } else { nil } } }
    var pongs: [Duration] { compactMap { if case .pong(let rtt) = $0 { rtt } else { nil } } }
}

/// This process's resident memory in bytes (Linux `/proc/self/statm`).
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// A query tag unique to a test, so the server's counters start at 0 for it.
func uniqueTag() -> String { UUID().uuidString.prefix(8).lowercased() }
