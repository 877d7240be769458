public import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A running child process (a server, a daemon, a producer to kill) whose output is gathered as
/// it comes, on threads of its own: Dispatch and the cooperative pool stay free for the test's
/// in-process servers. For a command run to completion use ``runOffPool(_:_:stdin:environment:)``.
public final class ChildProcess: @unchecked Sendable {
    /// The process.
    public let process = Process()
    private let lock = NSLock()
    private var output = Data()
    private var errors = Data()
    private var pipesClosed = 0

    /// Starts `executable`; `environment` adds to (or replaces variables of) the test's environment.
    public init(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Threads of their own rather than readabilityHandler: Dispatch must stay free for the servers.
        for (handle, isOutput) in [(out.fileHandleForReading, true), (err.fileHandleForReading, false)] {
            Thread.detachNewThread { [weak self] in
                let fd = handle.fileDescriptor
                while true {
                    let data = readChunk(from: fd)
                    guard let self else { return }
                    if data.isEmpty {
                        self.lock.withLock { self.pipesClosed += 1 }
                        return
                    }
                    self.lock.withLock { isOutput ? self.output.append(data) : self.errors.append(data) }
                }
            }
        }
    }

    /// Standard output so far, in lines.
    /// The complete lines written to standard output so far: a line still being written (no
    /// newline yet, say `port 41` of `port 41733`) is left out until its newline arrives.
    public var lines: [String] {
        let complete = lock.withLock { () -> [UInt8] in
            guard let end = output.lastIndex(of: UInt8(ascii: "\n")) else { return [] }
            return Array(output[...end])
        }
        return String(decoding: complete, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// Standard error so far.
    public var standardError: String { lock.withLock { String(decoding: errors, as: UTF8.self) } }

    /// Whether it still runs.
    public var isRunning: Bool { process.isRunning }

    /// Waits for an output line satisfying `match` and returns it.
    public func waitForLine(_ what: String, seconds: Double = 60, where match: (String) -> Bool) async throws -> String {
        var found: String?
        try await waitUntil(what, seconds: seconds) {
            found = lines.first(where: match)
            if found == nil && !process.isRunning { throw TimedOut(description: "process exited (\(process.terminationStatus)) before \(what): \(standardError)") }
            return found != nil
        }
        return found!
    }

    /// Waits until `url` answers 200 (a server's readiness or health endpoint); throws, with the
    /// end of the child's output, when it exits first or the time runs out.
    public func waitUntilReady(_ url: URL, seconds: Double = 60) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let (_, response) = try? await URLSession.shared.data(from: url), (response as? HTTPURLResponse)?.statusCode == 200 { return }
            guard process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        let said = lock.withLock { String(decoding: output + errors, as: UTF8.self) }
        stop()
        throw TimedOut(description: "\(process.executableURL?.lastPathComponent ?? "child") did not answer \(url) (\(process.isRunning ? "still running" : "exited")): \(said.suffix(2000))")
    }

    /// Waits for the exit and the end of both pipes; returns the status and all the output.
    public func finished(seconds: Double = 60) async throws -> (status: Int32, stdout: String, stderr: String) {
        let done = try await finishedBytes(seconds: seconds)
        return (done.status, String(decoding: done.stdout, as: UTF8.self), String(decoding: done.stderr, as: UTF8.self))
    }

    /// ``finished(seconds:)`` with the output's bytes as written.
    public func finishedBytes(seconds: Double = 60) async throws -> (status: Int32, stdout: Data, stderr: Data) {
        try await waitForExit(seconds: seconds)
        try await waitUntil("the output of process \(process.processIdentifier)", seconds: seconds) { lock.withLock { pipesClosed == 2 } }
        return lock.withLock { (process.terminationStatus, output, errors) }
    }

    /// Sends `signal` and waits (without blocking a thread of the cooperative pool) for the exit.
    public func kill(_ signal: Int32 = SIGKILL) async throws {
        Foundation.kill(process.processIdentifier, signal)
        try await waitForExit()
    }

    /// Waits for the exit without blocking a thread.
    public func waitForExit(seconds: Double = 60) async throws {
        try await waitUntil("process \(process.processIdentifier) to exit", seconds: seconds) { !process.isRunning }
    }

    /// Asks it to end (SIGTERM) without waiting: for `defer` in async tests.
    public func stop() {
        if process.isRunning { process.terminate() }
    }

    deinit {
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
    }
}
