@testable import APITraceFormat
import APITraceTestSupport
import Foundation
import Testing

/// ``GzipDeflater/compressWhole(_:level:)``: libdeflate's gzip where the system has it, zlib's
/// otherwise; either way standard gzip that our inflater and Python's `gzip` read back as the input.
@Suite struct CompressWholeTests {
    /// Inputs of the shapes a body takes: nothing, one byte, bytes that do not compress, protobuf-like
    /// records that repeat their keys, and more than one 64 KiB block of text.
    static let inputs: [(name: String, bytes: [UInt8])] = {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        let random = (0..<(1 << 20)).map { _ in UInt8(truncatingIfNeeded: next()) }
        var records: [UInt8] = []
        for i in 0..<60_000 {
            records += Array("\u{0A}\u{13}http.request.method\u{12}\u{05}\u{0A}\u{03}GET".utf8)
            records += Array("url.template/apps/\(next() % 97)/items/\(i)".utf8)
            withUnsafeBytes(of: next()) { records += $0 }
        }
        let text = Array((0..<3_000).map { "{\"type\":\"request\",\"route\":\"/apps/{id}\",\"status\":\($0 % 7 == 0 ? 503 : 200)}\n" }.joined().utf8)
        return [("empty", []), ("one byte", [0x41]), ("1 MiB of random bytes", random), ("protobuf-like records", records), ("text lines", text)]
    }()

    static func inflate(_ gzip: [UInt8]) throws -> [UInt8] {
        let inflater = try GzipInflater()
        var out: [UInt8] = []
        try gzip.withUnsafeBytes { try inflater.inflate($0) { out.append(contentsOf: $0) } }
        try inflater.finish()
        return out
    }

    /// Python's `gzip.decompress` of each body, an independent reader.
    static func pythonInflates(_ bodies: [[UInt8]], in dir: TemporaryDirectory) async throws -> [[UInt8]] {
        for (i, body) in bodies.enumerated() { try Data(body).write(to: URL(fileURLWithPath: dir.file("\(i).gz"))) }
        let script = "import gzip, sys\nfor i in range(int(sys.argv[2])):\n    open(f'{sys.argv[1]}/{i}.out', 'wb').write(gzip.decompress(open(f'{sys.argv[1]}/{i}.gz', 'rb').read()))"
        let result = try await runChild(try #require(OutsideTool.python3.path), ["-c", script, dir.path, String(bodies.count)])
        #expect(result.status == 0, "\(result.stderr)")
        return try bodies.indices.map { Array(try Data(contentsOf: URL(fileURLWithPath: dir.file("\($0).out")))) }
    }

    @Test(.requires(.libdeflate, .python3))
    func libdeflateWritesGzipThatOurInflaterAndPythonReadBackAsTheInput() async throws {
        let library = try #require(LibDeflate(library: "libdeflate.so.0"))
        let dir = TemporaryDirectory()
        var bodies: [[UInt8]] = []
        for level: Int32 in [1, 6] {
            for input in Self.inputs {
                let body = try #require(library.gzip(input.bytes, level: level), "\(input.name)")
                #expect(try Self.inflate(body) == input.bytes, "\(input.name), level \(level)")
                // libdeflate wrote it, not zlib: the two compress the same bytes differently.
                if input.bytes.count > 100_000 { #expect(body != (try GzipDeflater.compress(input.bytes, level: level)), "\(input.name)") }
                bodies.append(body)
            }
        }
        let python = try await Self.pythonInflates(bodies, in: dir)
        #expect(python == (Self.inputs.map(\.bytes) + Self.inputs.map(\.bytes)))
    }

    @Test func aMissingLibraryOrOneWithoutTheFunctionsIsNotLoaded() {
        #expect(LibDeflate(library: "libapitrace-no-such-library.so.0") == nil)
        // zlib loads, but has none of libdeflate's functions.
        #expect(LibDeflate(library: "libz.so.1") == nil)
    }

    @Test func compressWholeIsGzipOfTheInputWhicheverLibraryWritesIt() throws {
        for input in Self.inputs {
            for level: Int32 in [0, 1, 9] {
                #expect(try Self.inflate(try GzipDeflater.compressWhole(input.bytes, level: level)) == input.bytes, "\(input.name), level \(level)")
            }
        }
    }
}
