extension RequestOutcome {
    /// Every status a trace line can hold (`status`, 100 to 999): a line outside it is skipped.
    public static let traceStatuses: ClosedRange<Int> = 100...999

    /// The statuses of a trace that fail a request: those whose outcome is ``serverError``, 500 to 999.
    ///
    /// The one default of every reader and rule: the report's `errors`, the exported
    /// `outcome="server_error"`, an alert rule's `failure.statuses` and the Prometheus rules
    /// translated from it. A status from 600 up is not an HTTP class, but a server sent it: it
    /// fails like a 5xx everywhere.
    ///
    /// ```swift
    /// RequestOutcome.failedStatuses.contains(503)   // true
    /// RequestOutcome.failedStatuses.contains(600)   // true
    /// RequestOutcome.failedStatuses.contains(404)   // false: a client error
    /// ```
    public static let failedStatuses: ClosedRange<Int> = serverErrorFrom...traceStatuses.upperBound

    /// The first status whose outcome is ``serverError``.
    static let serverErrorFrom = 500

    /// True when a request answered with `status` failed (its outcome is an API failure).
    @inline(__always)
    public static func isFailed(status: Int) -> Bool { of(status: status).isFailure }

    /// True when a sender (the uploader, the notifiers) should send the same request again after
    /// this answer: a failed status (``isFailed(status:)``: 500 and up), `429 Too Many Requests`
    /// and `408 Request Timeout`. Every other status is the peer's final word on this request.
    ///
    /// ```swift
    /// RequestOutcome.isRetryable(status: 503)   // true
    /// RequestOutcome.isRetryable(status: 408)   // true
    /// RequestOutcome.isRetryable(status: 400)   // false
    /// ```
    public static func isRetryable(status: Int) -> Bool {
        status == 408 || status == 429 || isFailed(status: status)
    }
}
