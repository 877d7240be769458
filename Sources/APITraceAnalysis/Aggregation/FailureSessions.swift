package import APITraceFormat

/// Distinct sessions that met each class of failed request on one route: who is affected.
public struct FailureSessions: Sendable, Equatable {
    /// Sessions with a 5xx response.
    public var serverError = SessionCount()
    /// Sessions with a transport failure.
    public var transport = SessionCount()
    /// Sessions with a 4xx response.
    public var clientError = SessionCount()
    /// Sessions with an error of either kind (5xx or transport), each once.
    public var errors = SessionCount()

    /// Creates empty counts.
    public init() {}

    /// Counts a session whose request had this outcome (successes and client-side outcomes are not failures of the API).
    @inline(__always)
    package mutating func insert(_ session: UInt64, outcome: RequestOutcome) {
        switch outcome {
        case .serverError: serverError.insert(session); errors.insert(session)
        case .transport: transport.insert(session); errors.insert(session)
        case .clientError: clientError.insert(session)
        case .success, .cancelled, .offline: break
        }
    }

    /// Adds another route's sessions.
    public mutating func merge(_ other: FailureSessions) {
        serverError.merge(other.serverError)
        transport.merge(other.transport)
        clientError.merge(other.clientError)
        errors.merge(other.errors)
    }
}
