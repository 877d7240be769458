import APITraceCapture

/// A span's W3C ids as integers: made and copied without text, formatted as hex only when a
/// `traceparent` header or a `request` event needs them.
struct SpanIDs: Sendable, Equatable {
    /// The 128-bit trace id, high half first.
    var traceHigh: UInt64
    var traceLow: UInt64
    /// The span's own id (the `parent-id` field of the `traceparent` it propagates).
    var spanID: UInt64
    /// Trace flags; `01` means sampled.
    var flags: UInt8

    /// A new trace with random ids, sampled.
    static func random() -> SpanIDs {
        var (high, low, span) = FastRandom.shared.nextThree()
        if high == 0 { high = 1 }
        return SpanIDs(traceHigh: high, traceLow: low, spanID: span | 1, flags: 1)
    }

    /// A new span in this one's trace: same trace id and flags, new random span id.
    func child() -> SpanIDs {
        SpanIDs(traceHigh: traceHigh, traceLow: traceLow, spanID: FastRandom.shared.next() | 1, flags: flags)
    }

    /// The ids of a parsed `traceparent` (whose hex digits ``TraceParent/init(headerValue:)`` checked).
    init?(_ parent: TraceParent) {
        let trace = parent.traceID.utf8
        guard trace.count == 32, parent.parentID.utf8.count == 16,
              let high = UInt64(parent.traceID.prefix(16), radix: 16), let low = UInt64(parent.traceID.suffix(16), radix: 16),
              let span = UInt64(parent.parentID, radix: 16)
        else { return nil }
        self.init(traceHigh: high, traceLow: low, spanID: span, flags: parent.flags)
    }

    init(traceHigh: UInt64, traceLow: UInt64, spanID: UInt64, flags: UInt8) {
        self.traceHigh = traceHigh
        self.traceLow = traceLow
        self.spanID = spanID
        self.flags = flags
    }

    /// The trace id as written in `trace_id`: 32 lowercase hex digits.
    var traceIDText: String { TraceParent.hex(traceHigh, traceLow) }

    /// The same ids as header text.
    var traceParent: TraceParent {
        TraceParent(traceID: traceIDText, parentID: TraceParent.hex(spanID), flags: flags)
    }
}
