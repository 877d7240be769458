import Foundation

/// The hand-over between an export's reading threads (decode, map, encode) and a sending lane:
/// at most `capacity` encoded batches wait, so reading runs a few batches ahead of the receiver and
/// memory stays bounded whatever the files hold. Items of one producer come out in the order it
/// pushed them.
final class OTLPBatchQueue<Item>: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [Item] = []
    private var producersLeft: Int
    private var finished: Bool { producersLeft == 0 }
    private var cancelled = false
    private let capacity: Int

    init(capacity: Int, producers: Int = 1) {
        self.capacity = max(1, capacity)
        producersLeft = max(1, producers)
    }

    /// Waits for room; false once the consumer gave up (the producer stops reading).
    func push(_ item: Item) -> Bool {
        condition.withLock {
            while items.count >= capacity && !cancelled { condition.wait() }
            guard !cancelled else { return false }
            items.append(item)
            condition.broadcast()
            return true
        }
    }

    /// The next item; nil once the producer finished and everything was taken, or once cancelled.
    func pop() -> Item? {
        condition.withLock {
            while items.isEmpty && !finished && !cancelled { condition.wait() }
            guard !items.isEmpty else { return nil }
            let item = items.removeFirst()
            condition.broadcast()
            return item
        }
    }

    /// A producer is done (after its last push); the queue finishes with the last one.
    func finish() {
        condition.withLock {
            producersLeft -= 1
            condition.broadcast()
        }
    }

    /// The consumer stops taking: a waiting producer wakes and stops.
    func cancel() {
        condition.withLock {
            cancelled = true
            items.removeAll()
            condition.broadcast()
        }
    }

    /// Waits until every producer called ``finish()``.
    func waitUntilFinished() {
        condition.withLock { while !finished { condition.wait() } }
    }
}
