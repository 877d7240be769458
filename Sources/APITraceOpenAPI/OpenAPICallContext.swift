import Foundation

/// What ``TracingClientMiddleware`` learned about the operation running in this task, read by
/// ``APITraceCapture/Tracer/recordingDecodeFailures(entity:_:)`` when the response fails to decode.
final class OpenAPICallContext: @unchecked Sendable {
    // @unchecked: the fields are behind `lock`.
    private let lock = NSLock()
    private var storedRoute: String?

    var route: String? {
        get { lock.withLock { storedRoute } }
        set { lock.withLock { storedRoute = newValue } }
    }

    @TaskLocal static var current: OpenAPICallContext?
}
