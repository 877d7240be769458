import APITraceTestSupport
import Foundation

/// A running child process whose standard output is gathered line by line as it comes.
final class ChildProcess: @unchecked Sendable {
    let process = Process()
    private let lock = NSLock()
    private var output = Data()
    private var errors = Data()

    init(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Threads of their own rather than readabilityHandler: Dispatch must stay free for the servers.
        let outHandle = out.fileHandleForReading, errHandle = err.fileHandleForReading
        Thread.detachNewThread { [weak self] in
            while true {
                let data = outHandle.availableData
                if data.isEmpty { return }
                guard let self else { return }
                self.lock.withLock { self.output.append(data) }
            }
        }
        Thread.detachNewThread { [weak self] in
            while true {
                let data = errHandle.availableData
                if data.isEmpty { return }
                guard let self else { return }
                self.lock.withLock { self.errors.append(data) }
            }
        }
    }

    var lines: [String] {
        lock.withLock { String(decoding: output, as: UTF8.self) }.split(separator: "\n").map(String.init)
    }

    var standardError: String { lock.withLock { String(decoding: errors, as: UTF8.self) } }

    /// Waits for an output line satisfying `match` and returns it.
    func waitForLine(_ what: String, seconds: Double = 60, where match: (String) -> Bool) async throws -> String {
        var found: String?
        try await waitUntil(what, seconds: seconds) {
            found = lines.first(where: match)
            if found == nil && !process.isRunning { throw TimedOut(description: "process exited (\(process.terminationStatus)) before \(what): \(standardError)") }
            return found != nil
        }
        return found!
    }

    /// Sends `signal` and waits (without blocking a thread of the cooperative pool) for the exit.
    func kill(_ signal: Int32 = SIGKILL) async throws {
        Foundation.kill(process.processIdentifier, signal)
        try await waitForExit()
    }

    func waitForExit(seconds: Double = 60) async throws {
        try await waitUntil("process \(process.processIdentifier) to exit", seconds: seconds) { !process.isRunning }
    }

    deinit {
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
    }
}
