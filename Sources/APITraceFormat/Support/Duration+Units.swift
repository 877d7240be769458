/// The one conversion of `Duration` into the plain numbers traces, timeouts and backoffs use.
extension Duration {
    /// The duration in seconds, as a `Double`.
    package var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// The duration in milliseconds, as a `Double`, with sub-millisecond precision (`duration_ms`).
    ///
    /// Every traced request computes one: a duration under 18 s (attoseconds fitting the low word
    /// of the stored 128-bit count, `_high == 0`) is converted directly, without `components`'
    /// 128-bit division.
    package var inMilliseconds: Double {
        if _high == 0 { return Double(_low) / 1e15 }
        return Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15
    }

    /// Whole milliseconds (truncated toward zero), saturating at ±`Int64.max / 2` so sums of a
    /// few never overflow.
    package var wholeMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        guard abs(seconds) < Int64.max / 2000 else { return seconds < 0 ? -Int64.max / 2 : Int64.max / 2 }
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
