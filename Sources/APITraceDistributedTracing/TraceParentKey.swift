import APITraceCapture
import Instrumentation

/// Where the span context of spans started by ``RequestSpanTracer`` is kept in a `ServiceContext`.
enum TraceParentKey: ServiceContextKey {
    typealias Value = TraceParent
    static let nameOverride: String? = "apitrace.traceparent"
}

/// Writes header values into a dictionary.
struct DictionaryInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) {
        carrier[key.lowercased()] = value
    }
}

/// Reads header values from a dictionary.
struct DictionaryExtractor: Extractor {
    func extract(key: String, from carrier: [String: String]) -> String? {
        carrier[key.lowercased()]
    }
}

extension ServiceContext {
    /// The W3C context of this service context: ours when a ``RequestSpanTracer`` span made it,
    /// otherwise whatever `instrument` (the forwarded tracer) writes as `traceparent`.
    func traceParent(through instrument: (any Instrument)?) -> TraceParent? {
        if let ours = self[TraceParentKey.self] { return ours }
        guard let instrument else { return nil }
        var headers: [String: String] = [:]
        instrument.inject(self, into: &headers, using: DictionaryInjector())
        return headers["traceparent"].flatMap(TraceParent.init(headerValue:))
    }
}

extension TraceContextProvider {
    /// The caller's context from `ServiceContext.current`, read through the bootstrapped instrument
    /// (swift-otel, a ``RequestSpanTracer``, or any W3C tracer): requests made inside a span join its trace.
    ///
    /// ```swift
    /// var configuration = APITracer.Configuration()
    /// configuration.traceContext = .serviceContext
    /// ```
    public static let serviceContext = TraceContextProvider {
        ServiceContext.current?.traceParent(through: InstrumentationSystem.instrument)
    }
}
