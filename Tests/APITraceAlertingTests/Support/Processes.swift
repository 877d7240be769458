import APITraceTestSupport
import Foundation

struct ProcessResult: Sendable {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs a child process without blocking a Swift concurrency thread (the receiver answers on them).
func runChild(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) async throws -> ProcessResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    return try await withCheckedThrowingContinuation { continuation in
        let group = DispatchGroup()
        nonisolated(unsafe) var outData = Data(), errData = Data()
        group.enter(); DispatchQueue.global().async { outData = out.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        group.enter(); DispatchQueue.global().async { errData = err.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        group.enter()
        process.terminationHandler = { _ in group.leave() }
        do { try process.run() } catch {
            continuation.resume(throwing: error)
            return
        }
        group.notify(queue: .global()) {
            continuation.resume(returning: ProcessResult(
                status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self), stderr: String(decoding: errData, as: UTF8.self)))
        }
    }
}

/// Runs `apitrace` with arguments.
func apitrace(_ arguments: [String], environment: [String: String] = [:]) async throws -> ProcessResult {
    try await runChild(try builtProduct("apitrace").path, arguments, environment: environment)
}
