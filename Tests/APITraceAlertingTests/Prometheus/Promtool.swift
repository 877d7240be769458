import APITraceTestSupport
import Foundation
import Testing

/// Prometheus' own rule checker and rule unit tester (Debian package `prometheus`), run as a child process.
enum Promtool {
    /// The installed promtool, or `nil`.
    static let path: String? = ["/usr/bin/promtool", "/usr/local/bin/promtool"].first { FileManager.default.isExecutableFile(atPath: $0) }

    static let missing: Comment = "promtool is not installed: `apt-get install prometheus` (.ci/run and Scripts/install-test-deps.sh install it)"

    /// Runs `promtool` with `arguments`; returns its exit status and combined output.
    static func run(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        let result = try await runOffPool(path!, arguments)
        return (result.status, String(decoding: result.stdout + result.stderr, as: UTF8.self))
    }
}

