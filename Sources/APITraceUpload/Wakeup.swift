import Foundation

/// Lets the uploader's task sleep until a timeout, an explicit wake-up, or cancellation.
final class Wakeup: @unchecked Sendable {
    private let lock = NSLock()
    private var pending = false
    private var waiter: (id: Int, continuation: CheckedContinuation<Void, Never>)?
    private var timer: Task<Void, Never>?
    private var nextID = 0

    /// Returns after `timeout`, at the next ``signal()`` (or at once if one came since the last wait), or when cancelled.
    func wait(timeout: Duration) async {
        let id: Int = lock.withLock { nextID += 1; return nextID }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow: Bool = lock.withLock {
                    if pending || Task.isCancelled { pending = false; return true }
                    waiter = (id, continuation)
                    timer = Task { [weak self] in
                        try? await Task.sleep(for: timeout)
                        self?.resume(id: id)
                    }
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            resume(id: id)
        }
    }

    /// Wakes the waiting task, or the next one to wait.
    func signal() {
        let continuation: CheckedContinuation<Void, Never>? = lock.withLock {
            guard waiter != nil else { pending = true; return nil }
            return take()
        }
        continuation?.resume()
    }

    private func resume(id: Int) {
        let continuation: CheckedContinuation<Void, Never>? = lock.withLock {
            guard let waiter, waiter.id == id else { return nil }
            return take()
        }
        continuation?.resume()
    }

    /// Removes the waiter and stops its timer; call with the lock held.
    private func take() -> CheckedContinuation<Void, Never>? {
        let continuation = waiter?.continuation
        waiter = nil
        timer?.cancel()
        timer = nil
        return continuation
    }
}
