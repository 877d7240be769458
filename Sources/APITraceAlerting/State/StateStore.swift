import APITraceFormat
import Foundation

/// The state file with its lock: `state.json` beside `state.json.lock`.
///
/// ``withLock(timeout:_:)`` takes an exclusive `flock` on the lock file, reads the state, hands it
/// to the body, and writes it back atomically (temporary file, `fsync`, `rename`), so two
/// overlapping cron runs evaluate one after the other and the second sees the first's pages.
package struct StateStore: Sendable {
    /// Path of the state file.
    package let path: String

    /// Creates a store for a state file path (created on first write).
    package init(path: String) { self.path = path }

    /// Path of the lock file.
    package var lockPath: String { path + ".lock" }

    /// A problem with the state file or its lock.
    package struct Failure: Error, Sendable, CustomStringConvertible {
        /// What went wrong, naming the file.
        package var description: String
        /// True when the lock was held by another run for the whole timeout.
        package var isLockTimeout = false
        /// True when the state was read and evaluated but could not be written (a full disk):
        /// the file still holds the state from before this run.
        package var isNotSaved = false
    }

    /// The largest state file read: 200 pending notifications, 50 closed incidents and the mutes
    /// take well under a megabyte; more is not a state this apitrace wrote.
    package static let maximumBytes = 16 << 20

    /// Runs `body` with the state under the lock and saves what it leaves (unless it throws).
    package func withLock<T>(timeout: Duration = .seconds(50), _ body: (inout AlertState) async throws -> T) async throws -> T {
        // Not through a link planted at the lock's name (that would create a file wherever it points).
        let fd: Int32
        switch RegularFile.openLock(lockPath) {
        case .success(let opened): fd = opened
        case .failure(let refusal): throw Failure(description: "cannot open the lock file \(refusal)")
        }
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
    ///
    /// An empty file is damaged, not a fresh state (a fresh state would page again for every open
    /// incident), and a state written by a newer apitrace is refused, not rewritten as this
    /// version's: the fields it does not know would be lost. Both leave the file untouched.
    package func read() throws -> AlertState {
        let data: [UInt8]
        switch RegularFile.read(path, limit: Self.maximumBytes) {
        case .success(nil): return AlertState()
        case .success(let bytes?): data = bytes
        case .failure(let refusal): throw Failure(description: "cannot read the state file \(refusal)")
        }
        let damaged = "; move it away to start afresh (open incidents will page again)"
        guard !data.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) else {
            throw Failure(description: "the state file \(path) is damaged (it is empty)" + damaged)
        }
        if let probe = try? JSONDecoder().decode(VersionProbe.self, from: Data(data)), let version = probe.version,
           version > AlertState.currentVersion {
            throw Failure(description: "the state file \(path) was written by a newer apitrace (state version \(version); this one reads version \(AlertState.currentVersion)); left untouched: run the newer apitrace, or move the file away to start afresh")
        }
        do {
            return try JSONDecoder().decode(AlertState.self, from: Data(data))
        } catch {
            throw Failure(description: "the state file \(path) is damaged (\(error))" + damaged)
        }
    }

    private struct VersionProbe: Decodable { var version: Int? }

    /// Writes the state atomically through ``AtomicFileWriter`` (temporary file created
    /// exclusively beside it, `fsync`, `rename`): a link planted at either name is never written through.
    package func write(_ state: AlertState) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(state)
        do {
            try AtomicFileWriter.write(data, to: path)
        } catch {
            throw Failure(description: "cannot write the state file \(path): \(error.reason)", isNotSaved: true)
        }
    }
}
