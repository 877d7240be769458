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

/// Runs `apitrace` with arguments. Its report cache goes to a folder of this test process (unless
/// `environment` names one), so tests never write into the user's `~/.cache`.
public func apitrace(_ arguments: [String], environment: [String: String] = [:]) async throws -> ProcessResult {
    let environment = ["APITRACE_CACHE_DIR": testReportCacheDirectory].merging(environment) { $1 }
    return try await runChild(try builtProduct("apitrace").path, arguments, environment: environment)
}

/// The report cache of every `apitrace` this test process runs without a cache of its own.
public let testReportCacheDirectory: String = {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("apitrace-test-cache-\(getpid())").path
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}()
