import Foundation
public import Testing

/// A program or Python module that a test checks apitrace against (a real Prometheus, Chromium,
/// DuckDB...), and what installs it.
///
/// On a developer's machine a test whose tool is missing is skipped, and the skip names the command
/// that installs it, so the README's `swift test` passes on a machine that has never run
/// `Scripts/install-test-deps.sh`. Under CI (the `CI` variable set, as `.ci/run` runs) such a test
/// is never skipped: it runs and fails on the missing tool, so a green CI never hides a reference check.
///
/// ```swift
/// @Test(.requires(.chromium)) func rendersInABrowser() async throws { ... }
/// ```
public struct OutsideTool: Sendable, CustomStringConvertible {
    enum Kind: Sendable {
        case executable(candidates: [String])
        case library(candidates: [String])
        case pythonModule(String)
    }

    let kind: Kind
    /// What the tool is called in a skip message.
    public let description: String

    /// The path of an installed executable, or `nil` (always `nil` for a Python module).
    public var path: String? {
        guard case .executable(let candidates) = kind else { return nil }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Whether the tool is installed on this machine.
    public var isInstalled: Bool {
        switch kind {
        case .executable: return path != nil
        case .library(let candidates): return candidates.contains { FileManager.default.fileExists(atPath: $0) }
        case .pythonModule(let module):
            if OutsideTool.knownModules.contains(module) { return OutsideTool.pythonModules.contains(module) }
            return OutsideTool.imports([module]).contains(module)
        }
    }

    /// The installer every tool comes from; `.ci/run` runs it.
    public static let installHint = "sh Scripts/install-test-deps.sh installs it; CI runs this test whatever happens"

    static func executable(_ name: String, _ candidates: [String]) -> OutsideTool {
        OutsideTool(kind: .executable(candidates: candidates), description: name)
    }

    public static let promtool = executable("promtool", ["/usr/bin/promtool", "/usr/local/bin/promtool"])
    public static let prometheus = executable("prometheus", ["/usr/bin/prometheus", "/usr/local/bin/prometheus"])
    public static let alertmanager = executable(
        "prometheus-alertmanager", ["/usr/bin/prometheus-alertmanager", "/usr/local/bin/prometheus-alertmanager"])
    public static let chromium = executable(
        "chromium", ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"])
    /// libdeflate's shared library (Debian's `libdeflate0`), which `GzipDeflater.compressWhole` loads when it is there.
    public static let libdeflate = OutsideTool(
        kind: .library(candidates: ["x86_64", "aarch64"].map { "/usr/lib/\($0)-linux-gnu/libdeflate.so.0" } + ["/usr/lib/libdeflate.so.0", "/usr/local/lib/libdeflate.so.0"]),
        description: "libdeflate0 (libdeflate.so.0)")
    /// The python3 that `/usr/bin/env python3` runs, as the tests do (PATH first: a pyenv or venv
    /// python, with its own modules, before the system's).
    public static let python3 = executable("python3", pathCandidates("python3") + ["/usr/bin/python3", "/usr/local/bin/python3"])

    /// A Python module imported by a reference script (`prometheus_client`, `duckdb`, `chdb`...).
    public static func python(_ module: String) -> OutsideTool {
        OutsideTool(kind: .pythonModule(module), description: "python3 module \(module)")
    }

    public static let prometheusClient = python("prometheus_client")
    public static let duckdb = python("duckdb")
    public static let chdb = python("chdb")

    /// Whether this process runs under CI, where a missing tool fails its test instead of skipping it.
    public static let isCI: Bool = {
        let value = ProcessInfo.processInfo.environment["CI"] ?? ""
        return !value.isEmpty && value != "0" && value.lowercased() != "false"
    }()

    private static func pathCandidates(_ name: String) -> [String] {
        (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/\(name)" }
    }

    /// The modules the tests use, asked about together once per test process.
    private static let knownModules = ["prometheus_client", "duckdb", "chdb", "websockets", "opentelemetry.proto"]
    private static let pythonModules: Set<String> = imports(knownModules)

    /// The modules of `modules` that python3 can import.
    private static func imports(_ modules: [String]) -> Set<String> {
        guard let python = python3.path else { return [] }
        let script = """
            import importlib, sys
            for name in sys.argv[1:]:
                try:
                    importlib.import_module(name); print(name)
                except Exception:
                    pass
            """
        guard let result = try? run(python, ["-c", script] + modules), result.status == 0 else { return [] }
        return Set(String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").map(String.init))
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs the test only where every tool is installed, and always under CI (where a missing tool
    /// then fails the test): see ``OutsideTool``.
    public static func requires(_ tools: OutsideTool...) -> Self {
        let missing = tools.filter { !$0.isInstalled }.map(\.description)
        return .enabled(
            if: missing.isEmpty || OutsideTool.isCI,
            "needs \(missing.joined(separator: ", ")): \(OutsideTool.installHint)"
        )
    }
}
