/// The trace's `reason` class of a close code: what a report groups by, never the peer's own text.
enum WebSocketCloseReason {
    static func of(code: Int) -> String {
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
}
