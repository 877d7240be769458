import Foundation

struct TimedOut: Error, CustomStringConvertible {
    let description: String
}

/// Polls `condition` every 20 ms until it holds; throws after `seconds` (generous: the machine is shared).
func waitUntil(_ what: String, seconds: Double = 60, _ condition: () throws -> Bool) async throws {
    let deadline = Date().addingTimeInterval(seconds)
    while try !condition() {
        if Date() > deadline { throw TimedOut(description: "timed out after \(seconds) s waiting for \(what)") }
        try await Task.sleep(for: .milliseconds(20))
    }
}

/// Thread-safe list, for events and log lines gathered from other threads.
final class Recorded<Element: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Element] = []
    func append(_ item: Element) { lock.withLock { items.append(item) } }
    var all: [Element] { lock.withLock { items } }
}

/// ``run(_:_:stdin:)`` on a thread of its own: a test must never block one of the few threads of
/// Swift's cooperative pool, which the in-process server and the uploader need to make progress.
func runOffPool(_ executable: String, _ arguments: [String]) async throws -> (status: Int32, stdout: Data, stderr: Data) {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Result { try run(executable, arguments) })
        }
    }
}
