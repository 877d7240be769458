import Tracing

/// The OpenTelemetry HTTP client attributes a request is made of, picked out of a span's
/// attributes in one pass when it ends.
struct HTTPSpanFields {
    var method: String?
    var oldMethod: String?
    var host: String?
    var oldHost: String?
    var route: String?
    var template: String?
    var path: String?
    var status: Int64?
    var oldStatus: Int64?
    var bytesIn: Int64?
    var bytesOut: Int64?
    var errorType: String?
    var port: Int64?

    /// The fields of a whole set of attributes.
    init(_ attributes: SpanAttributes) {
        attributes.forEach { name, value in read(name, value) }
    }

    /// Takes `value` into its field when `name` is one a request is made of; ignores other names.
    ///
    /// Dispatches on the name's length first, so each attribute costs at most one string comparison.
    mutating func read(_ name: String, _ value: SpanAttribute) {
        switch name.utf8.count {
        case 8 where name == "url.path": path = value.stringValue
        case 10 where name == "http.route": route = value.stringValue
        case 10 where name == "error.type": errorType = value.stringValue
        case 11 where name == "server.port": port = value.int64Value.flatMap { (1...65535).contains($0) ? $0 : nil }
        case 11 where name == "http.method": oldMethod = value.stringValue
        case 12 where name == "url.template": template = value.stringValue
        case 13 where name == "net.peer.name": oldHost = value.stringValue
        case 14 where name == "server.address": host = value.stringValue
        case 16 where name == "http.status_code": oldStatus = value.int64Value
        case 19 where name == "http.request.method": method = value.stringValue
        case 22 where name == "http.request.body.size": bytesOut = value.int64Value
        case 23 where name == "http.response.body.size": bytesIn = value.int64Value
        case 25 where name == "http.response.status_code": status = value.int64Value
        default: break
        }
    }
}

extension SpanAttribute {
    var stringValue: String? {
        switch self {
        case .string(let value): value
        case .stringConvertible(let value): value.description
        default: nil
        }
    }

    var int64Value: Int64? {
        switch self {
        case .int64(let value): value
        case .int32(let value): Int64(value)
        case .string(let value): Int64(value)
        default: nil
        }
    }
}
