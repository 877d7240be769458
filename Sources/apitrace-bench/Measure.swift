import Foundation

/// Timing helpers shared by the benchmarks.
enum Measure {
    /// Seconds taken by `body`.
    static func seconds(_ body: () throws -> Void) rethrows -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        try body()
        let d = start.duration(to: clock.now)
        return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    /// Monotonic nanoseconds.
    @inline(__always) static func nanoseconds() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// The value at quantile `q` (0...1) of already sorted values.
    static func quantile(_ sorted: [Double], _ q: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * q).rounded()))]
    }

    /// The median of already sorted values: the mean of the middle two for an even count; 0 for none.
    static func median(_ sorted: [Double]) -> Double {
        guard !sorted.isEmpty else { return 0 }
        let mid = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
    }

    /// Seconds a shell command takes, run through /bin/sh.
    static func shell(_ command: String) throws -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        let seconds = try seconds {
            try process.run()
            process.waitUntilExit()
        }
        guard process.terminationStatus == 0 else {
            throw BenchError("`\(command)` exited with \(process.terminationStatus)")
        }
        return seconds
    }

    static func format(_ value: Double, _ decimals: Int = 1) -> String {
        String(format: "%.\(decimals)f", value)
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
