import Foundation

/// A value guarded by a lock: the one lock type of the project's modules.
///
/// `Synchronization.Mutex` would do the same but needs macOS 15 / iOS 18; this builds wherever
/// Foundation does, so the client libraries keep low deployment floors. Hold it for nanoseconds,
/// never across I/O or an `await`.
///
/// ```swift
/// let counts = Locked([String: Int]())
/// counts.withLock { $0["GET /apps", default: 0] += 1 }
/// ```
package final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()

    /// Creates a lock around `value`.
    package init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value.
    @inline(__always)
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
