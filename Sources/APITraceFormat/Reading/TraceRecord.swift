/// One event line of a trace file, scanned once and validated: the value every reader of traces
/// (report, alert, export, cat, the collector) takes its facts from, so they all mean the same.
///
/// Text fields are ``RawText`` slices of the line (or, for text written with escapes, of the
/// scanner's decoded copy), valid only during the callback that hands the record out. Request lines
/// carry their ``outcome`` and ``weight``, decided here and nowhere else. It holds every field of the
/// format, so ``TraceLine/decode(_:)`` builds full events from it rather than reading lines again.
package struct TraceRecord {
    /// The event type.
    package enum Kind: Sendable, Equatable {
        case request, decodeFailure, error, sse, log, dropped, websocket
    }

    package var kind: Kind = .log
    /// `type`, as written (decoded).
    package var type: RawText?
    /// `ts`, milliseconds since 1970.
    package var timestamp: Int64 = 0
    package var session: RawText?
    package var traceID: RawText?
    /// `span_id`: the event's span, when it was part of one.
    package var spanID: RawText?

    // request
    package var method: RawText?
    package var route: RawText?
    package var host: RawText?
    package var status: Int?
    package var durationMs: Double?
    package var bytesIn: Int64?
    package var bytesOut: Int64?
    package var error: RawText?
    package var attempt: Int64?
    package var sampleRate: Double?
    // request timing
    package var dnsMs: Double?
    package var connectMs: Double?
    package var tlsMs: Double?
    package var ttfbMs: Double?
    package var networkProtocol: RawText?
    package var reused: Bool?
    /// `port`: the server's port.
    package var port: Int64?
    /// The request's outcome (requests only).
    package var outcome: RequestOutcome = .success
    /// Requests this line stands for (`RequestWeight`); 1 for other types.
    package var weight: Double = 1
    /// True when the line's `sample_rate` was not honoured (see `RequestWeight`).
    package var ignoredSampleRate = false

    // decode_failure
    package var entity: RawText?
    package var failureKind: RawText?
    package var path: RawText?
    package var key: RawText?
    package var message: RawText?

    // error
    package var identity: RawText?
    package var suppressed: Int64?
    package var file: RawText?
    package var line: Int64?
    /// `user_info`: the JSON text of the object (checked, not decoded).
    package var userInfoJSON: RawText?
    /// `underlying`: the JSON text of the array of strings (checked, not decoded).
    package var underlyingJSON: RawText?

    // sse
    package var phase: RawText?
    package var reason: RawText?
    package var delayMs: Double?
    package var events: Int64?
    package var lastEventID: RawText?

    // websocket (phase, route, attempt, reason, status, delay, duration and bytes shared with the above)
    package var code: Int64?
    package var closedBy: RawText?
    package var messagesIn: Int64?
    package var messagesOut: Int64?
    package var pings: Int64?
    package var pingRTTMs: Double?
    package var silenceMs: Double?

    // log
    package var level: RawText?
    package var source: RawText?
    /// `metadata`: the JSON text of the object (checked, not decoded).
    package var metadataJSON: RawText?

    // header (``TraceRecordScanner/Result/header``)
    package var format: RawText?
    package var version: Int64?
    package var producer: RawText?
    package var app: RawText?
    package var appVersion: RawText?
    /// `started`, milliseconds since 1970.
    package var started: Int64?

    // dropped
    package var count: Int64?

    package init() {}
}

extension TraceRecord {
    /// The ranges a number from a file must lie in; a line outside them is skipped with a warning
    /// naming the field, so one hostile line can neither trap a reader nor outweigh a folder.
    package enum Limits {
        /// `duration_ms`, `delay_ms` and the request phases (`dns_ms`, `connect_ms`, `tls_ms`, `ttfb_ms`): up to 100 days.
        package static let milliseconds: ClosedRange<Double> = 0...8_640_000_000
        /// `status`: ``RequestOutcome/traceStatuses``, the range the failed statuses end with.
        package static let status: ClosedRange<Int64> = Int64(RequestOutcome.traceStatuses.lowerBound)...Int64(RequestOutcome.traceStatuses.upperBound)
        /// `bytes_in`, `bytes_out`: up to 2^53 (exact as a Double).
        package static let bytes: ClosedRange<Int64> = 0...9_007_199_254_740_992
        /// `suppressed`, `count`, `events`: up to 10^12 per line.
        package static let count: ClosedRange<Int64> = 0...1_000_000_000_000
        /// `attempt`.
        package static let attempt: ClosedRange<Int64> = 1...1_000_000
    }
}
