import APITraceFormat

/// What ``TracingClientMiddleware`` learned about the operation running in this task, read by
/// ``APITraceCapture/APITracer/recordingDecodeFailures(entity:_:)`` when the response fails to decode.
final class OpenAPICallContext: Sendable {
    private let storedRoute = Locked<String?>(nil)

    var route: String? {
        get { storedRoute.withLock { $0 } }
        set { storedRoute.withLock { $0 = newValue } }
    }

    @TaskLocal static var current: OpenAPICallContext?
}
