import APITraceFormat

/// Fixed-window counters per identity, holding the count of what they suppressed.
final class RateLimiter: Sendable {
    enum Decision: Equatable {
        /// Write the event, adding `suppressed` errors held back since the last one written.
        case admit(suppressed: Int)
        /// Hold the event back (counted).
        case suppress
    }

    private struct Window {
        var start: ContinuousClock.Instant
        var count: Int
        var suppressed: Int
    }

    let limit: RateLimit
    private let windows = Locked<[String: Window]>([:])
    /// Past this many identities, finished windows with nothing pending are forgotten.
    private static let pruneThreshold = 1024

    init(_ limit: RateLimit) { self.limit = limit }

    func admit(_ identity: String, now: ContinuousClock.Instant = .now) -> Decision {
        windows.withLock { windows in
            guard var window = windows[identity] else {
                if windows.count >= Self.pruneThreshold { prune(&windows, now: now) }
                windows[identity] = Window(start: now, count: 1, suppressed: 0)
                return .admit(suppressed: 0)
            }
            if now - window.start >= limit.window {
                window.start = now
                window.count = 0
            }
            guard window.count < limit.maxEvents else {
                window.suppressed += 1
                windows[identity] = window
                return .suppress
            }
            window.count += 1
            let suppressed = window.suppressed
            window.suppressed = 0
            windows[identity] = window
            return .admit(suppressed: suppressed)
        }
    }

    /// Takes every pending suppressed count, leaving zero.
    func drainSuppressed() -> Int {
        windows.withLock { windows in
            var total = 0
            for (identity, window) in windows where window.suppressed > 0 {
                total += window.suppressed
                windows[identity]?.suppressed = 0
            }
            return total
        }
    }

    private func prune(_ windows: inout [String: Window], now: ContinuousClock.Instant) {
        windows = windows.filter { _, window in window.suppressed > 0 || now - window.start < limit.window }
    }
}
