@testable import APITraceFormat
import APITraceTestSupport
import Foundation
import Testing

/// File names are bytes: one that is not UTF-8 must be found, opened and read like any other.
@Suite("File names as bytes")
struct FileSystemPathTests {
    @Test("any bytes round-trip through the string form; valid UTF-8 is left as it is",
          arguments: [
            Array("plain.jsonl.gz".utf8), Array("caf\u{E9}.jsonl".utf8), [0x63, 0x61, 0x66, 0xE9], [0xFF, 0xFE, 0x2E],
            [0xC3], [0xED, 0xA0, 0x80], [0xEF, 0x9C, 0x80] /* U+F700 itself, escaped */, [0xF4, 0x90, 0x80, 0x80], [0xC0, 0xAF],
          ] as [[UInt8]])
    func roundTrip(bytes: [UInt8]) {
        let text = FileSystemPath.string(fromBytes: bytes)
        let back = FileSystemPath.withBytes(of: text) { pointer in Array(UnsafeBufferPointer(start: pointer, count: strlen(pointer))).map { UInt8(bitPattern: $0) } }
        #expect(back == bytes)
        let decoded = String(decoding: bytes, as: UTF8.self)
        if Array(decoded.utf8) == bytes, !decoded.unicodeScalars.contains(where: { (0xF700..<0xF800).contains($0.value) }) {
            #expect(text == decoded)
        }
    }

    @Test("random byte names round-trip")
    func randomRoundTrip() {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let bytes = (0..<Int.random(in: 1...12, using: &rng)).map { _ in UInt8.random(in: 1...255, using: &rng) }
            let text = FileSystemPath.string(fromBytes: bytes)
            let back = FileSystemPath.withBytes(of: text) { Array(UnsafeBufferPointer(start: $0, count: strlen($0))).map { UInt8(bitPattern: $0) } }
            #expect(back == bytes)
        }
    }

    @Test("a trace file whose name is not UTF-8 is discovered, opened, and its events read; warnings show its bytes")
    func nonUTF8NameIsRead() throws {
        let dir = TemporaryDirectory()
        var name = Array("20261122T100000Z-caf".utf8) + [0xE9] + Array("-0001.jsonl.gz".utf8)
        let path = Array(dir.path.utf8) + [UInt8(ascii: "/")] + name
        let events = TraceFiles.requests(7, seed: 3)
        let bytes = TraceFiles.make(producer: "latin1", events: events)
        name.append(0)
        let fd = (path + [0]).withUnsafeBufferPointer { p in
            p.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_WRONLY | O_CREAT | O_EXCL, 0o600) }
        }
        try #require(fd >= 0)
        #expect(bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count)
        close(fd)
        let found = TraceFileDiscovery.find([dir.path])
        #expect(found.warnings.isEmpty)
        try #require(found.files.count == 1)
        let result = TraceFileReader(path: found.files[0]).forEachEvent { _ in }
        #expect(result.events == events.count && result.warnings.isEmpty)
        #expect(FileStatus(path: found.files[0])?.size == Int64(bytes.count))
        #expect(FileSystemPath.display(found.files[0]) == dir.path + "/20261122T100000Z-caf\\xE9-0001.jsonl.gz")
    }
}
