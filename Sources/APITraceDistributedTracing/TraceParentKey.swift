public import APITraceCapture
import Instrumentation

/// Where a span started by ``RequestSpanTracer`` is kept in its `ServiceContext`, for child spans
/// and `inject` to read its ids: the span itself, a reference the context stores inline (its ids,
/// 25 bytes, would be boxed). The context keeps the span alive as long as it lives; the span does
/// not keep that context, so there is no cycle.
enum RequestSpanKey: ServiceContextKey {
    typealias Value = RequestSpan
    static let nameOverride: String? = "apitrace.span"
}

/// Where the W3C ids of a `traceparent` that ``RequestSpanTracer`` extracted from a carrier are kept.
enum TraceParentKey: ServiceContextKey {
    typealias Value = SpanIDs
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
    /// The ids kept by ``RequestSpanTracer``: its innermost span's, or an extracted `traceparent`.
    var ownSpanIDs: SpanIDs? {
        // Outside any span the context is empty: no lookup (hashing) at all.
        guard !isEmpty else { return nil }
        return self[RequestSpanKey.self]?.ids ?? self[TraceParentKey.self]
    }

    /// The W3C ids of this service context: ours when a ``RequestSpanTracer`` span made it,
    /// otherwise whatever `instrument` (the forwarded tracer) writes as `traceparent`.
    func spanIDs(through instrument: (any Instrument)?) -> SpanIDs? {
        if let ours = ownSpanIDs { return ours }
        return instrumentSpanIDs(instrument)
    }

    /// The W3C ids `instrument` writes as `traceparent` for this context, whatever ours are: for a
    /// span the forwarded tracer just started, its context still holds our parent span.
    func instrumentSpanIDs(_ instrument: (any Instrument)?) -> SpanIDs? {
        guard let instrument else { return nil }
        var headers: [String: String] = [:]
        instrument.inject(self, into: &headers, using: DictionaryInjector())
        return headers["traceparent"].flatMap(TraceParent.init(headerValue:)).flatMap(SpanIDs.init)
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
        ServiceContext.current?.spanIDs(through: InstrumentationSystem.instrument)?.traceParent
    }
}
