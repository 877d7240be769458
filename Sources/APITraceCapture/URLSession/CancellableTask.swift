import APITraceFormat
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Holds a task so that Swift task cancellation can reach it.
final class CancellableTask: Sendable {
    private struct State {
        var task: URLSessionTask?
        var cancelled = false
    }

    private let state = Locked(State())

    var isCancelled: Bool { state.withLock { $0.cancelled } }

    func set(_ task: URLSessionTask) {
        let cancel = state.withLock { state in
            state.task = task
            return state.cancelled
        }
        if cancel { task.cancel() }
    }

    func cancel() {
        let task = state.withLock { state in
            state.cancelled = true
            return state.task
        }
        task?.cancel()
    }
}
