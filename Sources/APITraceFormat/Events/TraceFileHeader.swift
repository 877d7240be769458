/// The first line of every trace file (`"type":"header"`).
public struct TraceFileHeader: Sendable, Equatable {
    /// Always `apitrace` (`format`).
    public static let formatName = "apitrace"
    /// The format version this library writes and reads (`version`).
    public static let currentVersion = 1

    /// Format version of the file (`version`).
    public var version: Int
    /// Id of the producing process or device, also part of the file name (`producer`).
    public var producer: String
    /// Application name (`app`).
    public var app: String?
    /// Application version (`app_version`).
    public var appVersion: String?
    /// Host or device name (`host`).
    public var host: String?
    /// When the file was started (`started`).
    public var started: TraceTimestamp

    /// Creates a header.
    public init(
        version: Int = TraceFileHeader.currentVersion, producer: String, app: String? = nil,
        appVersion: String? = nil, host: String? = nil, started: TraceTimestamp
    ) {
        self.version = version
        self.producer = producer
        self.app = app
        self.appVersion = appVersion
        self.host = host
        self.started = started
    }
}
