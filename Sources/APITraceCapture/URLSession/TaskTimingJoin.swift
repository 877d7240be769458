package import APITraceFormat
package import Foundation
#if canImport(FoundationNetworking)
package import FoundationNetworking
#endif

/// Writes a task's event once both its completion and its metrics have arrived, in either order,
/// as Alamofire's request map does: Apple's `URLSession` may deliver
/// `urlSession(_:task:didFinishCollecting:)` before or after the completion handler.
///
/// It is the task's own delegate (`URLSessionTask.delegate`) for that one callback, and passes the
/// metrics on to the session's delegate, which would otherwise not see them. When the metrics
/// have not come `grace` after the completion (someone replaced the task's delegate), the event is
/// written without them: never lost, never held. Linux's `URLSession` delivers no metrics, so there
/// the event is written at the completion.
package final class TaskTimingJoin: NSObject, URLSessionTaskDelegate, Sendable {
    private enum State {
        case waiting
        case measured(TraceEvent.Request.Timing?)
        case completed(@Sendable (TraceEvent.Request.Timing?) -> Void)
        case written
    }

    private let state = Locked(State.waiting)
    /// Whether metrics are to be expected (Apple platforms).
    let waitsForMetrics: Bool
    /// How long a completion waits for late metrics.
    let grace: Duration

    package init(waitsForMetrics: Bool = TaskTimingJoin.platformDeliversMetrics, grace: Duration = .seconds(1)) {
        self.waitsForMetrics = waitsForMetrics
        self.grace = grace
    }

    /// A join for one task where `URLSession` delivers metrics; `nil` where it does not (Linux),
    /// so that a task costs no join there.
    package static func forTask() -> TaskTimingJoin? {
        platformDeliversMetrics ? TaskTimingJoin() : nil
    }

    /// True where `URLSession` delivers `URLSessionTaskMetrics`.
    static var platformDeliversMetrics: Bool {
        #if canImport(FoundationNetworking)
        false
        #else
        true
        #endif
    }

    /// Makes this join the task's delegate, where metrics are to be expected.
    func attach(to task: URLSessionTask) {
        guard waitsForMetrics else { return }
        task.delegate = self
    }

    /// The task completed: `write` runs now with the metrics when they came first (or none are to
    /// be expected), otherwise when they come, or after `grace` without them.
    package func complete(_ write: @escaping @Sendable (TraceEvent.Request.Timing?) -> Void) {
        guard waitsForMetrics else { return write(nil) }
        let measured: TraceEvent.Request.Timing?? = state.withLock { state in
            switch state {
            case .measured(let timing):
                state = .written
                return .some(timing)
            case .waiting:
                state = .completed(write)
                return .none
            case .completed, .written:
                return .none
            }
        }
        if let measured { return write(measured) }
        DispatchQueue.global().asyncAfter(deadline: .now() + grace.inSeconds) { [self] in
            if let write = takeWaitingWrite() { write(nil) }
        }
    }

    /// The metrics arrived (as phases, `nil` when they held no transaction).
    func measured(_ timing: TraceEvent.Request.Timing?) {
        let write: (@Sendable (TraceEvent.Request.Timing?) -> Void)? = state.withLock { state in
            switch state {
            case .waiting:
                state = .measured(timing)
                return nil
            case .completed(let write):
                state = .written
                return write
            case .measured, .written:
                return nil
            }
        }
        write?(timing)
    }

    private func takeWaitingWrite() -> (@Sendable (TraceEvent.Request.Timing?) -> Void)? {
        state.withLock { state in
            guard case .completed(let write) = state else { return nil }
            state = .written
            return write
        }
    }

    package func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics) {
        measured(TraceEvent.Request.Timing(metrics))
        #if canImport(Darwin)
        (session.delegate as? URLSessionTaskDelegate)?.urlSession?(session, task: task, didFinishCollecting: metrics)
        #endif
    }
}
