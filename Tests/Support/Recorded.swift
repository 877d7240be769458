import APITraceFormat

/// A thread-safe list, for events and log lines gathered from other threads.
public final class Recorded<Element: Sendable>: Sendable {
    private let items = Locked<[Element]>([])

    /// An empty list.
    public init() {}

    /// Adds `item` at the end.
    public func append(_ item: Element) { items.withLock { $0.append(item) } }

    /// Everything added so far, in order.
    public var all: [Element] { items.withLock { $0 } }
}
