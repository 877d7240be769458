import Dispatch
import Foundation

/// Reads many trace files at once, one file per core, and returns a per-file result in input order.
///
/// Each file is handled by one call of `perFile`, so results can be merged afterwards without
/// locks (map, then reduce).
package enum ParallelTraceReader {
    /// Runs `perFile` for every file on up to `parallelism` threads.
    package static func map<T: Sendable>(
        _ files: [String], parallelism: Int = ProcessInfo.processInfo.activeProcessorCount,
        _ perFile: @Sendable (TraceFileReader) -> T
    ) -> [T] {
        guard !files.isEmpty else { return [] }
        let results = ResultSlots<T>(count: files.count)
        let workers = max(1, min(parallelism, files.count))
        let next = ResultSlots<Int>(count: 1)
        next.set(0, 0)
        DispatchQueue.concurrentPerform(iterations: workers) { _ in
            while true {
                let index = next.takeNext(limit: files.count)
                guard let index else { return }
                results.set(index, perFile(TraceFileReader(path: files[index])))
            }
        }
        return results.values()
    }
}

/// Slots written by several threads, each slot once, under a lock.
private final class ResultSlots<T>: @unchecked Sendable {
    private var slots: [T?]
    private let lock = NSLock()

    init(count: Int) { slots = Array(repeating: nil, count: count) }

    func set(_ index: Int, _ value: T) {
        lock.lock(); slots[index] = value; lock.unlock()
    }

    func values() -> [T] { lock.lock(); defer { lock.unlock() }; return slots.map { $0! } }

    func takeNext(limit: Int) -> Int? where T == Int {
        lock.lock(); defer { lock.unlock() }
        let value = slots[0]!
        guard value < limit else { return nil }
        slots[0] = value + 1
        return value
    }
}
