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
        out.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            self?.lock.withLock { self?.output.append(data) }
        }
        err.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            self?.lock.withLock { self?.errors.append(data) }
        }
        try process.run()
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

    func kill(_ signal: Int32 = SIGKILL) {
        Foundation.kill(process.processIdentifier, signal)
        process.waitUntilExit()
    }

    deinit {
        if process.isRunning { kill() }
    }
}
