@testable import APITraceFormat
import APITraceTestSupport
import Foundation
import Testing

/// The one way apitrace opens a file, against real FIFOs, sockets, devices and links: nothing
/// blocks, nothing is followed, each refusal names what the path is.
@Suite("Regular file opening")
struct RegularFileTests {
    /// A folder holding one of each kind of path that is not a regular file, all trace-named.
    static func hostileFolder() throws -> TemporaryDirectory {
        let dir = TemporaryDirectory()
        #expect(mkfifo(dir.file("fifo.jsonl.gz"), 0o600) == 0)
        try FileManager.default.createSymbolicLink(atPath: dir.file("zero.jsonl.gz"), withDestinationPath: "/dev/zero")
        try FileManager.default.createSymbolicLink(atPath: dir.file("random.jsonl"), withDestinationPath: "/dev/urandom")
        let socket = try runOffPoolSync("/usr/bin/python3", ["-c", "import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])", dir.file("socket.jsonl.gz")])
        #expect(socket == 0)
        return dir
    }

    static func runOffPoolSync(_ executable: String, _ arguments: [String]) throws -> Int32 {
        try run(executable, arguments).status
    }

    @Test("a FIFO, a socket and links to devices are refused at once, each named with what it is")
    func refusals() throws {
        let dir = try Self.hostileFolder()
        let expected = [
            "fifo.jsonl.gz": "is a FIFO (named pipe), not a regular file",
            "zero.jsonl.gz": "is a symbolic link",
            "random.jsonl": "is a symbolic link",
            "socket.jsonl.gz": "is a socket, not a regular file",  // open(2) fails with ENXIO; the refusal says what it is
        ]
        let start = ContinuousClock.now
        for (name, reason) in expected {
            guard case .failure(let refusal) = RegularFile.open(dir.file(name)) else {
                Issue.record("\(name) was opened")
                continue
            }
            #expect(refusal.description.hasPrefix(dir.file(name)) && refusal.reason.contains(reason), "\(refusal)")
        }
        #expect(RegularFile.check(dir.file("socket.jsonl.gz"))?.reason.contains("a socket") == true)
        #expect(RegularFile.open("/dev/zero").failureReason?.contains("a character device") == true)
        #expect(ContinuousClock.now - start < .seconds(10))
    }

    @Test("the reader skips each of them with a warning naming the file, without blocking")
    func readerSkips() throws {
        let dir = try Self.hostileFolder()
        for name in ["fifo.jsonl.gz", "zero.jsonl.gz", "random.jsonl", "socket.jsonl.gz"] {
            let result = TraceFileReader(path: dir.file(name)).forEachEvent { _ in }
            #expect(result.header == nil)
            #expect(result.warnings.count == 1 && result.warnings[0].description.contains(dir.file(name)), "\(result.warnings)")
        }
    }

    @Test("discovery lists regular trace files only and names every other trace-named entry in a warning")
    func discoverySkips() throws {
        let dir = try Self.hostileFolder()
        try Data(TraceFiles.make(producer: "p", events: TraceFiles.requests(3, seed: 1))).write(to: URL(fileURLWithPath: dir.file("good.jsonl.gz")))
        let found = TraceFileDiscovery.find([dir.path])
        #expect(found.files == [dir.file("good.jsonl.gz")])
        let warned = found.warnings.map(\.path).sorted()
        #expect(warned == ["fifo.jsonl.gz", "random.jsonl", "socket.jsonl.gz", "zero.jsonl.gz"].map { dir.file($0) })
        // Named explicitly, a FIFO is refused too rather than read.
        let explicit = TraceFileDiscovery.find([dir.file("fifo.jsonl.gz")])
        #expect(explicit.files.isEmpty && explicit.warnings.first?.description.contains("FIFO") == true)
    }

    @Test("read returns a file whole up to its limit, refuses one byte more, and reads files whose size stat does not tell",
          arguments: [0, 1, 4_095, 65_536, 65_537, 300_001])
    func readWhole(size: Int) throws {
        let dir = TemporaryDirectory()
        let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }
        let path = dir.file("state.json")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        guard case .success(let read?) = RegularFile.read(path, limit: size) else { Issue.record("not read at its own size"); return }
        #expect(read == bytes)
        if size > 0 {
            let refusal = RegularFile.read(path, limit: size - 1).failureReason
            #expect(refusal == "is larger than \(size - 1) bytes; refused")
        }
        guard case .success(nil) = RegularFile.read(dir.file("missing.json"), limit: 10) else { Issue.record("a missing file is not nil"); return }
        // procfs reports a size of 0 for files that hold text: read to their end all the same, within the limit.
        guard case .success(let status?) = RegularFile.read("/proc/self/status", limit: 1 << 20) else { Issue.record("/proc/self/status not read"); return }
        #expect(String(decoding: status, as: UTF8.self).contains("VmRSS:"))
        #expect(RegularFile.read("/proc/self/status", limit: 10).failureReason == "is larger than 10 bytes; refused")
        // The largest limit a caller passes (Int32.max, Int.max) does not overflow the buffer's growth.
        guard case .success(let any?) = RegularFile.read(path, limit: .max) else { Issue.record("not read with no limit"); return }
        #expect(any == bytes)
    }

    @Test("a first line longer than the limit is refused after reading about the limit, not to its end",
          arguments: [true, false])
    func firstLineCapped(compressed: Bool) throws {
        let dir = TemporaryDirectory()
        let path = dir.file(compressed ? "nul.jsonl.gz" : "nul.jsonl")
        // 64 MiB of NULs without a newline (64 KiB once compressed): a reader that reads the line
        // to its end before refusing it reads all 64 MiB.
        let total = 64 << 20
        let chunk = [UInt8](repeating: 0, count: 1 << 20)
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        if compressed {
            let deflater = try GzipDeflater(level: 6)
            var out: [UInt8] = []
            for _ in 0..<(total / chunk.count) {
                chunk.withUnsafeBytes { deflater.compress($0, flush: .none, into: &out) }
                handle.write(Data(out)); out.removeAll(keepingCapacity: true)
            }
            deflater.compress(UnsafeRawBufferPointer(start: nil, count: 0), flush: .finish, into: &out)
            handle.write(Data(out))
        } else {
            for _ in 0..<(total / chunk.count) { handle.write(Data(chunk)) }
        }
        try handle.close()
        var reader = TraceFileReader(path: path)
        reader.maximumLineLength = 1 << 20
        let raw = reader.forEachRawLine { _, _ in true }
        #expect(raw.lines == 0)
        // The limit, plus at most one decompressed chunk and one read past it.
        #expect(raw.bytes <= reader.maximumLineLength + 2 * reader.readSize, "read \(raw.bytes) bytes")
        let result = reader.forEachEvent { _ in }
        #expect(result.warnings.map(\.description) == ["skipped \(path): not an apitrace trace file (its first line is longer than 1048576 bytes)"])
    }
}

extension Result where Failure == RegularFile.Refusal {
    var failureReason: String? { if case .failure(let refusal) = self { refusal.reason } else { nil } }
}
