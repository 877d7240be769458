public import APITraceFormat

/// The resource a trace file's events come from: its header's app, version and host, and the
/// session, as OpenTelemetry resource attributes (`service.name`, `service.version`, `host.name`,
/// `session.id`).
public struct OTLPResource: Sendable, Hashable {
    /// `service.name`: the header's `app`, or `unknown_service` as the SDK specification names a missing one.
    public var serviceName: String
    /// `service.version`: the header's `app_version`.
    public var serviceVersion: String?
    /// `host.name`: the header's `host`.
    public var hostName: String?
    /// `session.id`: the events' session.
    public var sessionID: String?

    /// Creates a resource.
    public init(serviceName: String, serviceVersion: String? = nil, hostName: String? = nil, sessionID: String? = nil) {
        self.serviceName = serviceName
        self.serviceVersion = serviceVersion
        self.hostName = hostName
        self.sessionID = sessionID
    }

    /// The resource of events of a file with `header` and of `session`.
    public init(header: TraceFileHeader?, session: String?) {
        self.init(
            serviceName: header?.app.flatMap { $0.isEmpty ? nil : $0 } ?? "unknown_service",
            serviceVersion: header?.appVersion, hostName: header?.host, sessionID: session)
    }

    /// The attributes, in a fixed order.
    public var attributes: [OTLPAttribute] {
        var a: [OTLPAttribute] = []
        a.add("service.name", serviceName)
        a.add("service.version", serviceVersion)
        a.add("host.name", hostName)
        a.add("session.id", sessionID)
        a.add("telemetry.sdk.name", "apitrace")
        return a
    }
}
