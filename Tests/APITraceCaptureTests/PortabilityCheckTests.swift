import APITraceTestSupport
import Foundation
import Testing

/// Runs Scripts/check-portability.sh as CI does, on files written for the test.
@Suite("Portability check script")
struct PortabilityCheckTests {
    static let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Scripts/check-portability.sh").path

    func run(_ source: String) throws -> (status: Int32, output: String) {
        let folder = TemporaryDirectory()
        let directory = folder.path
        let file = directory + "/Sample.swift"
        try source.write(toFile: file, atomically: true, encoding: .utf8)
        let out = try APITraceTestSupport.run("/bin/bash", [Self.script, directory])
        return (out.status, String(decoding: out.stdout + out.stderr, as: UTF8.self))
    }

    @Test("Linux-only symbols outside a platform condition fail the check, naming file and line", arguments: [
        "let t = info.st_mtim.tv_sec",
        "import Glibc",
        "import FoundationNetworking",
        "let t = info.st_mtimespec.tv_sec",
    ])
    func fails(line: String) throws {
        let (status, output) = try run("import Foundation\n\n\(line)\n")
        #expect(status == 1)
        #expect(output.contains("Sample.swift:3:"))
    }

    @Test("the same symbols inside #if os/canImport branches, or in comments, pass")
    func passes() throws {
        let source = """
        import Foundation
        #if canImport(FoundationNetworking)
        import FoundationNetworking
        #endif
        #if canImport(Glibc)
        import Glibc
        #elseif canImport(Darwin)
        import Darwin
        #endif
        // st_mtim is Linux only
        func modified(_ info: stat) -> Int {
            #if os(Linux)
            #if DEBUG
            return Int(info.st_mtim.tv_sec)
            #endif
            #else
            return Int(info.st_mtimespec.tv_sec)
            #endif
        }
        """
        let (status, output) = try run(source)
        #expect(status == 0, "\(output)")
    }

    @Test("a non-platform #if does not hide a Linux-only symbol")
    func nonPlatformCondition() throws {
        let (status, _) = try run("#if DEBUG\nlet t = info.st_mtim\n#endif\n")
        #expect(status == 1)
    }
}
