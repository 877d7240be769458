import APITraceTestSupport
import Foundation
import Testing

/// Prometheus' own rule checker and rule unit tester (Debian package `prometheus`), run as a child process.
enum Promtool {
    /// Runs `promtool` with `arguments`; returns its exit status and combined output.
    static func run(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        let path = try #require(OutsideTool.promtool.path, "promtool is not installed: \(OutsideTool.installHint)")
        let result = try await runOffPool(path, arguments)
        return (result.status, String(decoding: result.stdout + result.stderr, as: UTF8.self))
    }
}

