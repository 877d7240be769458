import APITraceCapture
import Tracing

extension RequestSpan {
    /// Records the `request` event of an ended HTTP client span; other client spans are not requests.
    /// Runs on the recorder's drain thread: `ts` is the wall-clock time of `end`, not of the call.
    func recordRequest(_ fields: HTTPSpanFields, error: (any Error)?, operationName: String, end: ContinuousClock.Instant) {
        // Newer OpenTelemetry names first where both exist.
        guard let method = fields.method ?? fields.oldMethod else { return }
        let route: String
        if let template = fields.route ?? fields.template {
            route = template
        } else if let path = fields.path {
            route = tracer.normalizer.normalize(path)
        } else {
            route = operationName.hasPrefix(method + " ") ? String(operationName.dropFirst(method.count + 1)) : "/"
        }
        let request = tracer.recorder.startRequest(
            method: method.upperCasedHTTPMethod, route: route, host: fields.host ?? fields.oldHost, bytesOut: fields.bytesOut,
            traceID: ids.traceIDText, startedAt: startedAt, spanID: TraceParent.hex(ids.spanID),
            port: fields.port.map { Int($0) }
        )
        let status = (fields.status ?? fields.oldStatus).map { Int($0) }
        let timestamp = TraceTimestamp.wallClock(of: end)
        if let error {
            request.fail(
                identity: ErrorIdentity.of(error), description: String(describing: error), status: status,
                bytesIn: fields.bytesIn, at: end, timestamp: timestamp
            )
        } else if let status {
            request.finish(status: status, bytesIn: fields.bytesIn, at: end, timestamp: timestamp)
        } else {
            request.fail(identity: fields.errorType ?? "SpanWithoutStatus", at: end, timestamp: timestamp)
        }
    }
}

extension String {
    /// The method in upper case; itself when it already is (ASCII without lower case letters), as
    /// methods almost always are, without the cost of `uppercased()`.
    var upperCasedHTTPMethod: String {
        let needsCasing = utf8.withContiguousStorageIfAvailable { bytes in
            bytes.contains { ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z")) || $0 >= 0x80 }
        }
        return needsCasing == false ? self : uppercased()
    }
}
