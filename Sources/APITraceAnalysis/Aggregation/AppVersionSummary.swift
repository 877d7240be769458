import APITraceFormat

/// What the files of one app version (their header's `app_version`) held: the report's
/// `--by app_version` breakdown.
public struct AppVersionSummary: Sendable {
    /// Trace files read.
    public var files = 0
    /// Events counted.
    public var events = 0
    /// Requests by outcome.
    public var requests = RequestCounts()
    /// Decode failures.
    public var decodeFailures = 0
    /// Recorded errors (suppressed repeats included).
    public var recordedErrors = 0
    /// Sessions that met an error (5xx or transport), a 4xx, a decode failure or a recorded error
    /// (cancelled and offline requests are the device's doing, not a failure that affects anyone).
    public var sessionsAffected = SessionCount()
    /// Earliest and latest event, milliseconds since 1970 (`Int64.max`/`.min` without events).
    public var firstMs = Int64.max, lastMs = Int64.min

    /// Creates an empty summary.
    public init() {}

    /// Adds another summary of the same app version.
    public mutating func merge(_ other: AppVersionSummary) {
        files += other.files
        events += other.events
        requests.merge(other.requests)
        decodeFailures += other.decodeFailures
        recordedErrors = recordedErrors.addingSaturated(other.recordedErrors)
        sessionsAffected.merge(other.sessionsAffected)
        firstMs = min(firstMs, other.firstMs)
        lastMs = max(lastMs, other.lastMs)
    }
}
