/// The one conversion of `Duration` into the plain numbers traces, timeouts and backoffs use.
extension Duration {
    /// The duration in seconds, as a `Double`.
    package var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// The duration in milliseconds, as a `Double`, with sub-millisecond precision (`duration_ms`).
    package var inMilliseconds: Double {
        Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15
    }

    /// Whole milliseconds (truncated toward zero), saturating at ±`Int64.max / 2` so sums of a
    /// few never overflow.
    package var wholeMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        guard abs(seconds) < Int64.max / 2000 else { return seconds < 0 ? -Int64.max / 2 : Int64.max / 2 }
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
