import Foundation

public struct ProcessResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
}

/// Runs a child process with the shared runner, off the cooperative pool (the receiver answers on it).
public func runChild(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) async throws -> ProcessResult {
    let out = try await runOffPool(executable, arguments, environment: environment)
    return ProcessResult(status: out.status, stdout: String(decoding: out.stdout, as: UTF8.self), stderr: String(decoding: out.stderr, as: UTF8.self))
}

/// Runs `apitrace` with arguments.
public func apitrace(_ arguments: [String], environment: [String: String] = [:]) async throws -> ProcessResult {
    try await runChild(try builtProduct("apitrace").path, arguments, environment: environment)
}
