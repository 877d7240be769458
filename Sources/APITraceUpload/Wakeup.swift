import APITraceFormat
import Foundation

/// Lets the uploader's task sleep until a timeout, an explicit wake-up, or cancellation.
final class Wakeup: Sendable {
    private struct State {
        var pending = false
        var waiter: (id: Int, continuation: CheckedContinuation<Void, Never>)?
        var timer: Task<Void, Never>?
        var nextID = 0

        /// Removes the waiter and stops its timer.
        mutating func take() -> CheckedContinuation<Void, Never>? {
            let continuation = waiter?.continuation
            waiter = nil
            timer?.cancel()
            timer = nil
            return continuation
        }
    }

    private let state = Locked(State())

    /// Returns after `timeout`, at the next ``signal()`` (or at once if one came since the last wait), or when cancelled.
    func wait(timeout: Duration) async {
        let id: Int = state.withLock { $0.nextID += 1; return $0.nextID }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow: Bool = state.withLock { state in
                    if state.pending || Task.isCancelled { state.pending = false; return true }
                    state.waiter = (id, continuation)
                    state.timer = Task { [weak self] in
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
        let continuation: CheckedContinuation<Void, Never>? = state.withLock { state in
            guard state.waiter != nil else { state.pending = true; return nil }
            return state.take()
        }
        continuation?.resume()
    }

    private func resume(id: Int) {
        let continuation: CheckedContinuation<Void, Never>? = state.withLock { state in
            guard let waiter = state.waiter, waiter.id == id else { return nil }
            return state.take()
        }
        continuation?.resume()
    }
}
