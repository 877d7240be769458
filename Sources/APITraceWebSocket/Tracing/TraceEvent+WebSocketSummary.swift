import APITraceCapture
public import APITraceFormat

extension TraceEvent.WebSocket {
    /// One human line for a connection change, as `apitrace listen ws://...` prints them to standard error.
    ///
    /// ```text
    /// connected to /live (attempt 1, 12 ms)
    /// connection closed by the server: 1001 going_away after 17 messages in, 2 out (60.00 s)
    /// attempt 2 failed: refused (closed by the server)
    /// reconnecting in 1.20 s (attempt 2)
    /// gave up: refused
    /// ```
    public var summary: String {
        switch phase {
        case .open:
            let time = durationMs.map { ", \(Int($0.rounded())) ms" } ?? ""
            return "connected to \(route) (attempt \(attempt ?? 0)\(time))"
        case .close where messagesIn == nil:
            let statusText = status.map { ", HTTP \($0)" } ?? ""
            return "attempt \(attempt ?? 0) failed: \(reason ?? "closed")\(statusText) (closed by the \(closedBy ?? "network"))"
        case .close:
            let time = durationMs.map { " (" + $0.traceFormattedSeconds + ")" } ?? ""
            return "connection closed by the \(closedBy ?? "network"): \(code.map(String.init) ?? "-") \(reason ?? "")"
                + " after \(messagesIn ?? 0) messages in, \(messagesOut ?? 0) out\(time)"
        case .reconnect:
            return "reconnecting in \((delayMs ?? 0).traceFormattedSeconds) (attempt \(attempt ?? 0))"
        case .fail:
            return "gave up: \(reason ?? "failed")\(code.map { " (close code \($0))" } ?? "")"
        default:
            return "\(phase) \(route)"
        }
    }
}
