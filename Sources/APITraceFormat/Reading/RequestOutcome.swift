/// What became of a request, in the one classification every command uses: the report's
/// columns, the alert's failure ratio, the exported `outcome` label and the collector's counters.
///
/// | outcome | when | an API failure? |
/// |---|---|---|
/// | `success` | a status below 400 | no |
/// | `client_error` | a 4xx status | no (counted apart) |
/// | `server_error` | a status from 500 up (``failedStatuses``: 5xx, and 600 to 999 too) | yes |
/// | `transport` | no status, and the error is not one below (timeouts, refused or lost connections, TLS, DNS) | yes |
/// | `cancelled` | no status; the app cancelled (`URLError.cancelled`, `CancellationError`) | no: client-side |
/// | `offline` | no status; the request never left the device (`URLError.notConnectedToInternet`, `dataNotAllowed`, `internationalRoamingOff`, `callIsActive`, `backgroundSessionWasDisconnected`) | no: client-side |
///
/// A status always wins over an error identity: a server that answered was reached.
public enum RequestOutcome: String, Sendable, CaseIterable, Comparable {
    case success
    case clientError = "client_error"
    case serverError = "server_error"
    case transport
    case cancelled
    case offline

    /// Error identities of requests the app itself cancelled.
    public static let cancelledIdentities: [String] = [
        "URLError.cancelled", "CancellationError", "NSURLErrorDomain#-999",
    ]

    /// Error identities of requests that never left the device.
    public static let offlineIdentities: [String] = [
        "URLError.notConnectedToInternet", "URLError.dataNotAllowed", "URLError.internationalRoamingOff",
        "URLError.callIsActive", "URLError.backgroundSessionWasDisconnected",
        "NSURLErrorDomain#-1009", "NSURLErrorDomain#-1020", "NSURLErrorDomain#-1018", "NSURLErrorDomain#-1019",
        "NSURLErrorDomain#-997",
    ]

    /// The outcome of a request with this status (nil: the transport failed) and error identity.
    public static func of(status: Int?, error: String?) -> RequestOutcome {
        if let status { return of(status: status) }
        guard let error else { return .transport }
        if cancelledIdentities.contains(error) { return .cancelled }
        if offlineIdentities.contains(error) { return .offline }
        return .transport
    }

    /// The outcome of a request answered with `status`.
    @inline(__always)
    public static func of(status: Int) -> RequestOutcome {
        status < 400 ? .success : status < serverErrorFrom ? .clientError : .serverError
    }

    /// The outcome of a request without a status, from its error identity's UTF-8 bytes (no allocation).
    package static func ofTransportFailure(identity: UnsafeRawBufferPointer?) -> RequestOutcome {
        guard let identity, identity.count >= 10 else { return .transport }
        if cancelledBytes.contains(where: { $0.elementsEqual(identity) }) { return .cancelled }
        if offlineBytes.contains(where: { $0.elementsEqual(identity) }) { return .offline }
        return .transport
    }

    private static let cancelledBytes = cancelledIdentities.map { Array($0.utf8) }
    private static let offlineBytes = offlineIdentities.map { Array($0.utf8) }

    /// True for outcomes that come from the device or the app, not the API: never in a failure ratio by default.
    public var isClientSide: Bool { self == .cancelled || self == .offline }

    /// True for the outcomes that count as API failures by default (`server_error`, `transport`).
    public var isFailure: Bool { self == .serverError || self == .transport }

    public static func < (a: RequestOutcome, b: RequestOutcome) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}
