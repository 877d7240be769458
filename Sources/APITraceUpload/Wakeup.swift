import Foundation

/// Lets the uploader's task sleep until a timeout, an explicit wake-up, or cancellation.
final class Wakeup: @unchecked Sendable {
    private let lock = NSLock()
    private var pending = false
    private var waiter: (id: Int, continuation: CheckedContinuation<Void, Never>)?
    private var nextID = 0

    /// Returns after `timeout`, at the next ``signal()`` (or at once if one came since the last wait), or when cancelled.
    func wait(timeout: Duration) async {
        let id: Int = lock.withLock { nextID += 1; return nextID }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow: Bool = lock.withLock {
                    if pending || Task.isCancelled { pending = false; return true }
                    waiter = (id, continuation)
                    return false
                }
                if resumeNow { continuation.resume(); return }
                Task { [weak self] in
                    try? await Task.sleep(for: timeout)
                    self?.resume(id: id)
                }
            }
        } onCancel: {
            resume(id: id)
        }
    }

    /// Wakes the waiting task, or the next one to wait.
    func signal() {
        let continuation: CheckedContinuation<Void, Never>? = lock.withLock {
            guard let waiter else { pending = true; return nil }
            self.waiter = nil
            return waiter.continuation
        }
        continuation?.resume()
    }

    private func resume(id: Int) {
        let continuation: CheckedContinuation<Void, Never>? = lock.withLock {
            guard let waiter, waiter.id == id else { return nil }
            self.waiter = nil
            return waiter.continuation
        }
        continuation?.resume()
    }
}
