#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a lock: the one lock type of the project's modules.
///
/// `Synchronization.Mutex` would do the same but needs macOS 15 / iOS 18; this builds wherever
/// POSIX threads do, so the client libraries keep low deployment floors. Hold it for nanoseconds,
/// never across I/O or an `await`.
///
/// ```swift
/// let counts = Locked([String: Int]())
/// counts.withLock { $0["GET /apps", default: 0] += 1 }
/// ```
///
/// The value and its mutex live in one allocation (a `ManagedBuffer`), not three as with an
/// `NSLock` beside a boxed value: capture creates one per traced span, so creation is on the hot path.
/// Copies of a `Locked` share the same value and lock.
package struct Locked<Value>: @unchecked Sendable {
    private let storage: Storage

    /// Creates a lock around `value`.
    package init(_ value: Value) {
        storage = Storage.make(value)
    }

    /// Runs `body` with exclusive access to the value.
    @inline(__always)
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try storage.withUnsafeMutablePointers { value, mutex in
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&value.pointee)
        }
    }

    /// The value as the buffer's header, the mutex as its one element.
    private final class Storage: ManagedBuffer<Value, pthread_mutex_t> {
        static func make(_ value: Value) -> Storage {
            let storage = unsafeDowncast(Storage.create(minimumCapacity: 1) { _ in value }, to: Storage.self)
            storage.withUnsafeMutablePointerToElements { mutex in
                mutex.initialize(to: pthread_mutex_t())
                pthread_mutex_init(mutex, nil)
            }
            return storage
        }

        deinit {
            // ManagedBuffer destroys the header (the value) itself; the element is ours.
            withUnsafeMutablePointerToElements { mutex in
                pthread_mutex_destroy(mutex)
                mutex.deinitialize(count: 1)
            }
        }
    }
}
