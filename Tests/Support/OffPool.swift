import Foundation

/// Runs CPU-heavy test set-up (generating hours of traffic) on a thread of its own: blocking one of
/// the cooperative pool's few threads would starve the in-process servers of other suites.
@discardableResult
public func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
