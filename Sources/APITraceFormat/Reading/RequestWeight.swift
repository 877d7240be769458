/// How many requests one `request` line stands for: the one rule every command applies.
///
/// A successful request (``RequestOutcome/success``) kept by sampling carries `sample_rate`, the
/// share kept, and stands for `1 / sample_rate` requests. Every other line stands for one request:
/// failed requests are never sampled (the format says so), so a `sample_rate` on a failure, or one
/// outside ``minimumSampleRate`` ... 1, is ignored and the caller warns.
package enum RequestWeight {
    /// The smallest `sample_rate` honoured (one line stands for at most 10,000 requests); smaller
    /// rates are treated as a producer's bug, not as a reason to let one line outweigh an incident.
    package static let minimumSampleRate = 0.0001

    /// The weight of a request line, and whether its `sample_rate` was ignored.
    @inline(__always)
    package static func of(outcome: RequestOutcome, sampleRate: Double?) -> (weight: Double, ignoredSampleRate: Bool) {
        guard let rate = sampleRate else { return (1, false) }
        guard outcome == .success, rate >= minimumSampleRate, rate <= 1 else { return (1, true) }
        return (1 / rate, false)
    }
}
