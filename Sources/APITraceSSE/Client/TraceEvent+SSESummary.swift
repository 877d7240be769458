import APITraceCapture
public import APITraceFormat

extension TraceEvent.SSE {
    /// One human line for a connection change, as `apitrace listen` prints them to standard error.
    ///
    /// ```text
    /// connected to /news/stream (attempt 1, HTTP 200, 12 ms)
    /// connection closed: end_of_stream after 17 events (60.0 s)
    /// reconnecting in 1.20 s (attempt 2, Last-Event-ID 42)
    /// the server ended the stream for good (HTTP 204); not reconnecting
    /// gave up: http_status (HTTP 500)
    /// dropped the connection: event_too_large after 3 events (0.42 s)
    /// ```
    ///
    /// The route, reason and last event id are cut to a few hundred bytes, so a server's 50 MB `id`
    /// cannot flood the terminal on every reconnect.
    public var summary: String {
        let route = TraceText.clip(route, maximumBytes: TraceText.maximumFieldBytes)
        let reason = reason.map { TraceText.clip($0, maximumBytes: TraceText.maximumFieldBytes) }
        let lastEventID = lastEventID.map { TraceText.clip($0, maximumBytes: TraceText.maximumIDBytes) }
        switch phase {
        case .open:
            let time = durationMs.map { ", \(Int($0.rounded())) ms" } ?? ""
            return "connected to \(route) (attempt \(attempt ?? 0), HTTP \(status ?? 0)\(time))"
        case .close where status == 204:
            return "the server ended the stream for good (HTTP 204); not reconnecting"
        case .close:
            let how = reason ?? "closed"
            let statusText = status.map { $0 == 200 ? "" : " (HTTP \($0))" } ?? ""
            let time = durationMs.map { " (" + $0.traceFormattedSeconds + ")" } ?? ""
            return "connection closed: \(how)\(statusText) after \(events ?? 0) events\(time)"
        case .reconnect:
            let id = lastEventID.map { ", Last-Event-ID \($0)" } ?? ""
            return "reconnecting in \((delayMs ?? 0).traceFormattedSeconds) (attempt \(attempt ?? 0)\(id))"
        case .fail where reason == "line_too_long" || reason == "event_too_large":
            let time = durationMs.map { " (" + $0.traceFormattedSeconds + ")" } ?? ""
            return "dropped the connection: \(reason ?? "") after \(events ?? 0) events\(time)"
        case .fail:
            return "gave up: \(reason ?? "failed")\(status.map { " (HTTP \($0))" } ?? "")"
        default:
            return "\(phase) \(route)"
        }
    }
}
