public import APITraceCapture
import OpenAPIRuntime

extension APITracer {
    /// Runs calls of a generated OpenAPI client and records a `decode_failure` when a response does
    /// not decode: the runtime decodes after middlewares have run, so ``TracingClientMiddleware``
    /// alone never sees the `DecodingError` inside the `ClientError`.
    ///
    /// ```swift
    /// let apps = try await APITracer.shared.recordingDecodeFailures {
    ///     try await client.listApps().ok.body.json
    /// }
    /// ```
    ///
    /// The failure carries the full key path (a missing `stability` in the second app gives
    /// `data.apps[1].stability`), the route the middleware recorded for the operation, and as
    /// entity `entity` or, by default, the operation id with `.Output` (`listApps.Output`).
    /// The error is rethrown unchanged.
    public func recordingDecodeFailures<T>(
        entity: String? = nil, _ body: () async throws -> T
    ) async throws -> T {
        let context = OpenAPICallContext()
        do {
            return try await OpenAPICallContext.$current.withValue(context) { try await body() }
        } catch let error as ClientError {
            if let decoding = error.underlyingError as? DecodingError {
                recordDecodeFailure(TraceEvent.DecodeFailure(
                    decoding, entity: entity ?? error.operationID + ".Output", route: context.route
                ))
            }
            throw error
        }
    }
}
