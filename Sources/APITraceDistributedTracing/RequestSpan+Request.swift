import APITraceCapture
import Tracing

extension RequestSpan {
    /// Records the `request` event of an ended HTTP client span; other client spans are not requests.
    func recordRequest(attributes: SpanAttributes, errors: [any Error], operationName: String, end: ContinuousClock.Instant) {
        // One pass over the attributes, newer OpenTelemetry names first where both exist.
        var fields = HTTPSpanFields()
        attributes.forEach { name, value in fields.read(name, value) }
        guard let method = fields.method ?? fields.oldMethod else { return }
        let route: String
        if let template = fields.route {
            route = template
        } else if let path = fields.path {
            route = tracer.normalizer.normalize(path)
        } else {
            route = operationName.hasPrefix(method + " ") ? String(operationName.dropFirst(method.count + 1)) : "/"
        }
        let request = tracer.recorder.startRequest(
            method: method.uppercased(), route: route, host: fields.host ?? fields.oldHost, bytesOut: fields.bytesOut,
            traceID: traceParent.traceID, startedAt: startedAt
        )
        let status = (fields.status ?? fields.oldStatus).map { Int($0) }
        if let error = errors.first {
            request.fail(error, status: status, bytesIn: fields.bytesIn, at: end)
        } else if let status {
            request.finish(status: status, bytesIn: fields.bytesIn, at: end)
        } else {
            request.fail(identity: fields.errorType ?? "SpanWithoutStatus", at: end)
        }
    }
}

/// The OpenTelemetry HTTP client attributes a request is made of.
struct HTTPSpanFields {
    var method: String?
    var oldMethod: String?
    var host: String?
    var oldHost: String?
    var route: String?
    var path: String?
    var status: Int64?
    var oldStatus: Int64?
    var bytesIn: Int64?
    var bytesOut: Int64?
    var errorType: String?

    mutating func read(_ name: String, _ value: SpanAttribute) {
        switch name {
        case "http.request.method": method = value.stringValue
        case "http.method": oldMethod = value.stringValue
        case "server.address": host = value.stringValue
        case "net.peer.name": oldHost = value.stringValue
        case "http.route", "url.template": route = route ?? value.stringValue
        case "url.path": path = value.stringValue
        case "http.response.status_code": status = value.int64Value
        case "http.status_code": oldStatus = value.int64Value
        case "http.response.body.size": bytesIn = value.int64Value
        case "http.request.body.size": bytesOut = value.int64Value
        case "error.type": errorType = value.stringValue
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
