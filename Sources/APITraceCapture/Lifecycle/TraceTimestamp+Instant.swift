#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension TraceTimestamp {
    /// The wall-clock time of a past `instant` of the monotonic clock: now on the wall clock, less
    /// the time elapsed since `instant`. For events built after what they record ended (a span's
    /// event, built on the drain thread), so their `ts` is when it ended, not when they were built.
    package static func wallClock(of instant: ContinuousClock.Instant) -> TraceTimestamp {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        let (seconds, attoseconds) = instant.duration(to: .now).components
        let nanoseconds = (Int64(spec.tv_sec) - seconds) * 1_000_000_000 + Int64(spec.tv_nsec) - attoseconds / 1_000_000_000
        // Floor division: truncated to the millisecond like `now()`.
        let (quotient, remainder) = nanoseconds.quotientAndRemainder(dividingBy: 1_000_000)
        return TraceTimestamp(millisecondsSince1970: remainder < 0 ? quotient - 1 : quotient)
    }
}
