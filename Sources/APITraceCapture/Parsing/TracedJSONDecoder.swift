import APITraceFormat
import Foundation

/// A `JSONDecoder` that records a `decode_failure` when decoding fails, then throws the original error.
///
/// ```swift
/// let decoder = TracedJSONDecoder(tracer: .shared)
/// let apps = try decoder.decode(AppsResponse.self, from: response.body, route: "/apps")
/// ```
///
/// A missing key in the second app of `{"data":{"apps":[...]}}` records:
///
/// ```text
/// {"type":"decode_failure","route":"/apps","entity":"AppsResponse","kind":"keyNotFound","path":"data.apps[1].stability","key":"stability",...}
/// ```
///
/// The payload is never copied into the trace.
public struct TracedJSONDecoder: Sendable {
    /// Where failures go.
    public let tracer: Tracer
    /// The decoder doing the work; configure it before handing it over and do not change it afterwards.
    public let decoder: JSONDecoder

    /// Creates a traced decoder.
    public init(tracer: Tracer = .shared, decoder: JSONDecoder = JSONDecoder()) {
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
            tracer.recordDecodeFailure(TraceEvent.DecodeFailure(error, entity: String(describing: type), route: route))
            throw error
        }
    }
}

extension Tracer {
    /// Records a decode failure and logs it at `warning`.
    public func recordDecodeFailure(_ failure: TraceEvent.DecodeFailure) {
        guard submit(TraceEvent(.decodeFailure(failure))) else { return }
        log(.warning, "decode failure \(failure.entity) \(failure.kind) at \(failure.path)\(failure.route.map { " (route \($0))" } ?? "")")
    }
}
