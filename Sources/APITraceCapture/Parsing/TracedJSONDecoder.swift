public import APITraceFormat
public import Foundation

/// A `JSONDecoder` that records a `decode_failure` when decoding fails, then throws the original error.
///
/// ```swift
/// let decoder = TracedJSONDecoder(tracer: .shared)
/// let apps = try decoder.decode(AppsResponse.self, from: response.body, route: "/apps")
/// ```
///
/// A missing key in the second app of `{"data":{"apps":[...]}}` records the model that failed as
/// `entity` (the innermost `Decodable` type holding the failing path; the top-level type starts the message):
///
/// ```text
/// {"type":"decode_failure","route":"/apps","entity":"App","kind":"keyNotFound","path":"data.apps[1].stability","key":"stability","message":"decoding AppsResponse: ..."}
/// ```
///
/// The payload is never copied into the trace.
public struct TracedJSONDecoder: Sendable {
    /// Where failures go.
    public let tracer: APITracer
    /// The decoder doing the work; configure it before handing it over and do not change it afterwards.
    public let decoder: JSONDecoder

    /// Creates a traced decoder.
    public init(tracer: APITracer = .shared, decoder: JSONDecoder = JSONDecoder()) {
        self.tracer = tracer
        self.decoder = decoder
    }

    /// Decodes `type` from `data`; on failure records it with `route` and rethrows the error unchanged.
    public func decode<T: Decodable>(_ type: T.Type, from data: Data, route: String? = nil) throws -> T {
        do {
            return try DecodeContext.$current.withValue(DecodeContext(tracer: tracer, route: route)) {
                try decoder.decode(type, from: data)
            }
        } catch let error as DecodingError {
            let topLevel = String(describing: type)
            var failure = TraceEvent.DecodeFailure(error, entity: topLevel, route: route)
            // Name the model that failed (`App`), not the envelope (`Envelope<AppsPayload>`); the
            // top-level type stays in the message. Costs a second decode, on failure only.
            if let model = ModelTypeProbe.modelType(type, from: data, failingPath: Self.failingPath(error), decoder: decoder), model != topLevel {
                failure.entity = model
                failure.message = "decoding \(topLevel): " + failure.message
            }
            tracer.tracedFailures.note(identity: ErrorIdentity.of(error), description: String(describing: error))
            tracer.recordDecodeFailure(failure)
            throw error
        }
    }
}

extension TracedJSONDecoder {
    /// The path of the value that failed, the missing key included.
    static func failingPath(_ error: DecodingError) -> [any CodingKey] {
        switch error {
        case .keyNotFound(let key, let context): context.codingPath + [key]
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context): context.codingPath
        @unknown default: []
        }
    }
}

extension APITracer {
    /// Records a decode failure and logs it at `warning`.
    public func recordDecodeFailure(_ failure: TraceEvent.DecodeFailure) {
        guard submit(TraceEvent(.decodeFailure(failure))) else { return }
        log(.warning, "decode failure \(failure.entity) \(failure.kind) at \(failure.path)\(failure.route.map { " (route \($0))" } ?? "")")
    }
}
