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
        DispatchQueue.concurrentPerform(iterations: workers) { _ in
            while true {
                let index = results.takeNext(limit: files.count)
                guard let index else { return }
                results.set(index, perFile(TraceFileReader(path: files[index])))
            }
        }
        return results.values()
    }

    /// Runs `perFile` for every file on up to `parallelism` threads, each thread folding the files
    /// it took into its own value (made by `initial`): returns one value per thread, to be merged
    /// by the caller. Folding needs no lock, so the threads never wait for each other's merges.
    package static func reduce<T: Sendable>(
        _ files: [String], parallelism: Int = ProcessInfo.processInfo.activeProcessorCount,
        into initial: @Sendable () -> T, _ perFile: @Sendable (inout T, TraceFileReader) -> Void
    ) -> [T] {
        guard !files.isEmpty else { return [] }
        let workers = max(1, min(parallelism, files.count))
        let results = ResultSlots<T>(count: workers)
        let next = Locked(0)
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            var value = initial()
            while let index = next.withLock({ next -> Int? in
                guard next < files.count else { return nil }
                defer { next += 1 }
                return next
            }) {
                perFile(&value, TraceFileReader(path: files[index]))
            }
            results.set(worker, value)
        }
        return results.values()
    }
}

/// Slots written by several threads, each slot once, and the index of the next file to take.
private final class ResultSlots<T>: Sendable {
    private let state: Locked<(slots: [T?], next: Int)>

    init(count: Int) { state = Locked((Array(repeating: nil, count: count), 0)) }

    func set(_ index: Int, _ value: T) {
        state.withLock { $0.slots[index] = value }
    }

    func values() -> [T] { state.withLock { $0.slots.map { $0! } } }

    func takeNext(limit: Int) -> Int? {
        state.withLock { state in
            guard state.next < limit else { return nil }
            defer { state.next += 1 }
            return state.next
        }
    }
}
