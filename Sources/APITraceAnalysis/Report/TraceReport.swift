public import APITraceFormat

/// A summary made presentable: sorted tables, rates, percentiles, a time series at a readable
/// bucket width and the error definitions. Every output format renders this one value.
///
/// ```swift
/// let summary = TraceSummarizer().summarize(paths: ["traces"])
/// let report = TraceReport(summary: summary, options: .init(sources: ["traces"]))
/// print(report.render(.text))
/// ```
public struct TraceReport: Sendable {
    /// How a report is put together.
    public struct Options: Sendable {
        /// The paths that were read, shown in the report.
        public var sources: [String]
        /// Count decode failures as errors in error counts and rates.
        public var includeDecodeFailures: Bool
        /// Time-series bucket width in seconds; chosen from the span when `nil`.
        public var bucketSeconds: Int64?
        /// Error identities listed.
        public var topErrors: Int
        /// Show the breakdown by header `app_version` (`--by app_version`).
        public var byAppVersion: Bool

        /// Creates options.
        public init(sources: [String] = [], includeDecodeFailures: Bool = false, bucketSeconds: Int64? = nil, topErrors: Int = 10, byAppVersion: Bool = false) {
            self.byAppVersion = byAppVersion
            self.sources = sources
            self.includeDecodeFailures = includeDecodeFailures
            self.bucketSeconds = bucketSeconds
            self.topErrors = topErrors
        }
    }

    /// The options the report was built with.
    public var options: Options
    /// The error definitions in force, one sentence each; every format prints them.
    public var definitions: [String]
    /// Earliest and latest event counted.
    public var firstEvent, lastEvent: TraceTimestamp?
    /// What was read and what went wrong.
    public var input: Input
    /// Headline numbers.
    public var totals: Totals
    /// Per method and route, most requests first.
    public var routes: [RouteRow]
    /// Error identities, most occurrences first (at most ``Options/topErrors``).
    public var errors: [ErrorRow]
    /// Error identities not listed.
    public var errorsOmitted: Int
    /// Decode-failure groups, largest first.
    public var decodeFailures: [DecodeFailureRow]
    /// Server-Sent Events.
    public var sse: SSESection
    /// WebSocket connections.
    public var webSocket: WebSocketSection
    /// Requests and error rate over time.
    public var timeSeries: TimeSeriesSection
    /// Per header `app_version`, newest-looking first (only with ``Options/byAppVersion``).
    public var appVersions: [AppVersionRow]
    /// What changed against a baseline (only with `--baseline`); set after building the report.
    public var comparison: Comparison? = nil

    /// Span between the first and last event, in seconds.
    public var spanSeconds: Double {
        guard let firstEvent, let lastEvent else { return 0 }
        return Double(lastEvent.millisecondsSince1970 - firstEvent.millisecondsSince1970) / 1000
    }

    /// True when at least one trace file was read.
    public var hasData: Bool { input.filesRead > 0 }

    /// What was read.
    public struct Input: Sendable {
        /// Paths named (or the default folder).
        public var sources: [String]
        /// Files read.
        public var filesRead: Int
        /// Files skipped by the filter.
        public var filesFiltered: Int
        /// Files that could not be used.
        public var filesUnusable: Int
        /// Events left out by the filter.
        public var eventsFiltered: Int
        /// Lines of unknown event types.
        public var unknownTypes: Int
        /// Invalid lines skipped.
        public var invalidLines: Int
        /// Warnings, one sentence each, naming the file.
        public var warnings: [String]
        /// Warnings not listed.
        public var warningsOmitted: Int
    }

    /// Headline numbers.
    public struct Totals: Sendable {
        /// Events counted.
        public var events: Int
        /// Events by type.
        public var eventsByType: [String: Int]
        /// Request events.
        public var requests: Int
        /// Requests with sampled successes scaled back (equals ``requests`` without sampling).
        public var estimatedRequests: Double
        /// Requests that carried a `sample_rate`.
        public var sampledRequests: Int
        /// Errors (transport + 5xx, plus decode failures when folded in).
        public var errors: Int
        /// 5xx responses.
        public var serverErrors: Int
        /// Transport failures.
        public var transportErrors: Int
        /// 4xx responses.
        public var clientErrors: Int
        /// Decode failures.
        public var decodeFailures: Int
        /// Requests the app cancelled: client-side, in no rate.
        public var cancelled = 0
        /// Requests that never left an offline device: client-side, in no rate.
        public var offline = 0
        /// Errors per (estimated) request.
        public var errorRate: Double
        /// Client errors per (estimated) request.
        public var clientErrorRate: Double
        /// Decode failures per (estimated) request.
        public var decodeFailureRate: Double
        /// Recorded errors (`error` events, suppressed repeats included).
        public var recordedErrors: Int
        /// Events producers reported dropping.
        public var dropped: Int
        /// Dropped events by reason.
        public var droppedByReason: [String: Int]
        /// Latency percentiles over all requests.
        public var latency: Percentiles
        /// Bytes received and sent.
        public var bytesIn, bytesOut: Int64
    }

    /// p50, p95, p99 and max in milliseconds (`nil` without data).
    public struct Percentiles: Sendable, Equatable {
        /// Median.
        public var p50: Double?
        /// 95th percentile.
        public var p95: Double?
        /// 99th percentile.
        public var p99: Double?
        /// Largest value.
        public var max: Double?

        init(_ sketch: QuantileSketch) {
            p50 = sketch.percentile(50)
            p95 = sketch.percentile(95)
            p99 = sketch.percentile(99)
            max = sketch.max
        }
    }

    /// One row of the per-route table.
    public struct RouteRow: Sendable {
        /// HTTP method.
        public var method: String
        /// Route template.
        public var route: String
        /// Requests.
        public var requests: Int
        /// Requests with sampled successes scaled back.
        public var estimatedRequests: Double
        /// 5xx responses.
        public var serverErrors: Int
        /// 4xx responses.
        public var clientErrors: Int
        /// Transport failures.
        public var transportErrors: Int
        /// Decode failures of responses on this route (attributed to its busiest method).
        public var decodeFailures: Int
        /// Errors as defined (transport + 5xx, plus decode failures when folded in).
        public var errors: Int
        /// Errors per (estimated) request.
        public var errorRate: Double
        /// Distinct sessions that met an error (5xx or transport) on this route.
        public var sessionsWithErrors: Count
        /// Distinct sessions that met a 4xx on this route.
        public var sessionsWithClientErrors: Count
        /// Latency percentiles.
        public var latency: Percentiles
        /// Bytes received.
        public var bytesIn: Int64
        /// Bytes sent.
        public var bytesOut: Int64
    }

    /// One error identity.
    public struct ErrorRow: Sendable {
        /// The identity.
        public var identity: String
        /// `recorded` (an `error` event) or `request` (a failed request's `error`).
        public var source: String
        /// Events plus suppressed repeats.
        public var occurrences: Int
        /// Events.
        public var events: Int
        /// Suppressed repeats reported by producers.
        public var suppressed: Int
        /// Distinct sessions that met it.
        public var sessions: Count
        /// First and last time seen.
        public var firstSeen, lastSeen: TraceTimestamp?
        /// Example messages (recorded errors only).
        public var examples: [String]
        /// Routes, most occurrences first (`-` without a route).
        public var routes: [(route: String, count: Int)]
    }

    /// One decode-failure group.
    public struct DecodeFailureRow: Sendable {
        /// The Swift type being decoded.
        public var entity: String
        /// Kind of failure.
        public var kind: String
        /// Key path with array indices folded to `[*]`.
        public var path: String
        /// The failing key.
        public var key: String?
        /// Failures.
        public var count: Int
        /// Distinct sessions that met it.
        public var sessions: Count
        /// First and last time seen.
        public var firstSeen, lastSeen: TraceTimestamp?
        /// Routes, most failures first.
        public var routes: [(route: String, count: Int)]
        /// Example full paths.
        public var examplePaths: [String]
        /// Example decoder messages.
        public var exampleMessages: [String]
        /// True for a required key that was missing (`keyNotFound`): the server stopped sending a
        /// field the app needs. Reports make these stand out.
        public var isMissingKey: Bool { kind == "keyNotFound" }
    }

    /// A distinct count of sessions, exact or estimated (``SessionCount``).
    public struct Count: Sendable, Equatable {
        /// The count.
        public var value: Int
        /// False when the count is a HyperLogLog estimate (past ``SessionCount/exactLimit``).
        public var exact: Bool

        init(_ sessions: SessionCount) {
            value = sessions.count
            exact = sessions.isExact
        }

        /// The count as text: `~` marks an estimate.
        public var text: String { (exact ? "" : "~") + ReportNumberFormatting.count(value) }
    }

    /// One app version's row of the `--by app_version` table.
    public struct AppVersionRow: Sendable {
        /// The header's `app_version` (`-` without one).
        public var appVersion: String
        /// Files read.
        public var files: Int
        /// Events counted.
        public var events: Int
        /// Requests.
        public var requests: Int
        /// Errors (transport + 5xx, plus decode failures when folded in).
        public var errors: Int
        /// Errors per (estimated) request.
        public var errorRate: Double
        /// 4xx responses.
        public var clientErrors: Int
        /// Decode failures.
        public var decodeFailures: Int
        /// Recorded errors.
        public var recordedErrors: Int
        /// Sessions that met a failed request, a decode failure or a recorded error.
        public var sessionsAffected: Count
        /// First and last event.
        public var firstSeen, lastSeen: TraceTimestamp?
    }

    /// Server-Sent Events.
    public struct SSESection: Sendable {
        /// Connections opened.
        public var connections: Int
        /// Connections closed.
        public var closes: Int
        /// Reconnects.
        public var reconnects: Int
        /// Give-ups.
        public var fails: Int
        /// Reconnects per hour of the report's span (`nil` for a span under a minute).
        public var reconnectsPerHour: Double?
        /// Why connections closed or failed, most first.
        public var reasons: [(reason: String, count: Int)]
        /// Reconnect delay percentiles in milliseconds.
        public var reconnectDelay: Percentiles
        /// Events received per closed connection.
        public var eventsPerConnection: Percentiles
        /// Mean events per closed connection.
        public var meanEventsPerConnection: Double?
        /// Per stream route.
        public var routes: [(route: String, counts: SSERouteCounts)]
    }

    /// Counts per time bucket.
    public struct TimeSeriesSection: Sendable {
        /// Bucket width in seconds.
        public var bucketSeconds: Int64
        /// Buckets in time order, empty ones included.
        public var points: [Point]

        /// One bucket.
        public struct Point: Sendable {
            /// Bucket start.
            public var start: TraceTimestamp
            /// Requests.
            public var requests: Int
            /// Errors as defined.
            public var errors: Int
            /// 4xx responses.
            public var clientErrors: Int
            /// Decode failures.
            public var decodeFailures: Int
            /// Errors per (estimated) request.
            public var errorRate: Double
        }
    }
}
