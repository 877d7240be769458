import Foundation

/// The state file with its lock: `state.json` beside `state.json.lock`.
///
/// ``withLock(timeout:_:)`` takes an exclusive `flock` on the lock file, reads the state, hands it
/// to the body, and writes it back atomically (temporary file, `fsync`, `rename`), so two
/// overlapping cron runs evaluate one after the other and the second sees the first's pages.
public struct StateStore: Sendable {
    /// Path of the state file.
    public let path: String

    /// Creates a store for a state file path (created on first write).
    public init(path: String) { self.path = path }

    /// Path of the lock file.
    public var lockPath: String { path + ".lock" }

    /// A problem with the state file or its lock.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// What went wrong, naming the file.
        public var description: String
        /// True when the lock was held by another run for the whole timeout.
        public var isLockTimeout = false
    }

    /// Runs `body` with the state under the lock and saves what it leaves (unless it throws).
    public func withLock<T>(timeout: Duration = .seconds(50), _ body: (inout AlertState) async throws -> T) async throws -> T {
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure(description: "cannot open the lock file \(lockPath): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                throw Failure(description: "cannot lock \(lockPath): \(String(cString: strerror(errno)))")
            }
            guard clock.now < deadline else {
                throw Failure(description: "another apitrace alert run has held \(lockPath) for \(timeout); skipped this run", isLockTimeout: true)
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
        defer { flock(fd, LOCK_UN) }
        var state = try read()
        let result = try await body(&state)
        try write(state)
        return result
    }

    /// Reads the state; an absent file is an empty state.
    public func read() throws -> AlertState {
        guard let data = FileManager.default.contents(atPath: path) else {
            if FileManager.default.fileExists(atPath: path) { throw Failure(description: "cannot read the state file \(path)") }
            return AlertState()
        }
        if data.isEmpty { return AlertState() }
        do {
            return try JSONDecoder().decode(AlertState.self, from: data)
        } catch {
            throw Failure(description: "the state file \(path) is damaged (\(error)); move it away to start afresh (open incidents will page again)")
        }
    }

    /// Writes the state atomically: a temporary file in the same folder, flushed, then renamed over the old one.
    public func write(_ state: AlertState) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(state)
        let directory = (path as NSString).deletingLastPathComponent
        let temporary = (directory.isEmpty ? "." : directory) + "/.\((path as NSString).lastPathComponent).\(getpid()).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure(description: "cannot write \(temporary): \(String(cString: strerror(errno)))") }
        let ok = data.withUnsafeBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                let n = Foundation.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 { if errno == EINTR { continue }; return false }
                offset += n
            }
            return fsync(fd) == 0
        }
        close(fd)
        guard ok, rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw Failure(description: "cannot write the state file \(path): \(reason)")
        }
    }
}
