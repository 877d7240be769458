extension TraceEvent.WebSocket {
    /// The trace's `reason` class of a close code: what a report groups by and a metric labels
    /// with, never the peer's own text. One of a fixed set of names whatever the code, so a label
    /// or key made from it cannot grow with a hostile file.
    package static func reasonClass(ofCode code: Int) -> String {
        switch code {
        case 1000: "normal"
        case 1001: "going_away"
        case 1002: "protocol_error"
        case 1003: "unsupported_data"
        case 1005: "no_status"
        case 1006: "abnormal"
        case 1007: "invalid_data"
        case 1008: "policy"
        case 1009: "message_too_big"
        case 1010: "missing_extension"
        case 1011: "server_error"
        case 1012: "service_restart"
        case 1013: "try_again_later"
        case 1014: "bad_gateway"
        case 1015: "tls_error"
        case 3000...3999: "library"
        case 4000...4999: "application"
        default: "other"
        }
    }

    /// True when a `close` with this code is an abnormal end: anything but a normal (1000) or
    /// going-away (1001) close, a missing code included. The one definition the report, the
    /// metrics, the alert rules and the OTLP severity share.
    package static func isAbnormalClose(code: Int?) -> Bool {
        guard let code else { return true }
        return code != 1000 && code != 1001
    }
}
