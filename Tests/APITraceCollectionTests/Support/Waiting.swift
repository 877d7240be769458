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
