import APITraceFormat

extension APITracer {
    /// Records a non-fatal error in one line, like Crashlytics' `recordError`.
    ///
    /// Writes an `error` event with the error's stable ``ErrorIdentity``, the identities of the
    /// errors it wraps, `userInfo` as strings, the route when given, and where it was recorded.
    /// Subject to ``Configuration/errorRateLimit``, which counts what it holds back.
    ///
    /// Pass it any error your code catches, those of traced calls included: a failure this tracer
    /// already recorded (a transport failure of a traced request, a decode failure of
    /// ``TracedJSONDecoder``) is not written again, so the usual pattern counts each failure once.
    /// Its log line says so, at `debug`.
    ///
    /// ```swift
    /// do { try await sync() } catch {
    ///     APITracer.shared.recordError(error, userInfo: ["screen": "apps"])
    /// }
    /// ```
    public func recordError(
        _ error: any Error, userInfo: [String: Any] = [:], route: String? = nil,
        file: String = #fileID, line: Int = #line
    ) {
        let plain = ErrorIdentity.plainCase(error)
        let identity = plain?.identity ?? ErrorIdentity.of(error)
        if !tracedFailures.isEmpty, tracedFailures.consume(identity: identity, description: String(describing: error)) {
            log(.debug, "error \(identity) was already recorded by the traced request or decoder that threw it; not counted again", file: file, line: line)
            return
        }
        // The limit is checked before the message and user info are built, so a suppressed error costs little.
        var suppressed: Int?
        if let errorLimiter {
            switch errorLimiter.admit(identity) {
            case .suppress: return
            case .admit(let count): suppressed = count > 0 ? count : nil
            }
        }
        var info: [String: String] = [:]
        for (key, value) in userInfo { info[key] = String(describing: value) }
        let message = plain?.message ?? String(describing: error)
        let underlying = plain == nil ? ErrorIdentity.underlyingChain(of: error) : []
        let written = submit(TraceEvent(.error(.init(
            identity: identity, message: message, userInfo: info, underlying: underlying,
            route: route, file: file, line: line, suppressed: suppressed
        ))), rateLimited: true)
        guard written else { return }
        // `log` redacts the text; a route's matrix parameters (`;jsessionid=`) need the route's own rule.
        log(.error, "error \(identity)\(route.map { " on \(redaction.redact(route: $0))" } ?? ""): \(message)", file: file, line: line)
    }
}

/// Records a non-fatal error with ``APITracer/shared``; see ``APITracer/recordError(_:userInfo:route:file:line:)``.
///
/// ```swift
/// recordError(error, userInfo: ["screen": "apps"])
/// ```
public func recordError(
    _ error: any Error, userInfo: [String: Any] = [:], route: String? = nil,
    file: String = #fileID, line: Int = #line
) {
    APITracer.shared.recordError(error, userInfo: userInfo, route: route, file: file, line: line)
}
