import APITraceCapture
import Tracing

extension RequestSpan {
    /// Records the `request` event of an ended HTTP client span; other client spans are not requests.
    func recordRequest(attributes: SpanAttributes, errors: [any Error], operationName: String, end: ContinuousClock.Instant) {
        guard let method = attributes.string("http.request.method") ?? attributes.string("http.method") else { return }
        let host = attributes.string("server.address") ?? attributes.string("net.peer.name")
        let route: String
        if let template = attributes.string("http.route") ?? attributes.string("url.template") {
            route = template
        } else if let path = attributes.string("url.path") {
            route = tracer.normalizer.normalize(path)
        } else {
            route = operationName.hasPrefix(method + " ") ? String(operationName.dropFirst(method.count + 1)) : "/"
        }
        let request = tracer.recorder.startRequest(
            method: method.uppercased(), route: route, host: host, bytesOut: attributes.int("http.request.body.size"),
            traceID: traceParent.traceID, startedAt: startedAt
        )
        let status = (attributes.int("http.response.status_code") ?? attributes.int("http.status_code")).map { Int($0) }
        let bytesIn = attributes.int("http.response.body.size")
        if let error = errors.first {
            request.fail(error, status: status, bytesIn: bytesIn, at: end)
        } else if let status {
            request.finish(status: status, bytesIn: bytesIn, at: end)
        } else {
            request.fail(identity: attributes.string("error.type") ?? "SpanWithoutStatus", at: end)
        }
    }
}

extension SpanAttributes {
    func string(_ name: String) -> String? {
        switch get(name) {
        case .string(let value): value
        case .stringConvertible(let value): value.description
        default: nil
        }
    }

    func int(_ name: String) -> Int64? {
        switch get(name) {
        case .int64(let value): value
        case .int32(let value): Int64(value)
        case .string(let value): Int64(value)
        default: nil
        }
    }
}
