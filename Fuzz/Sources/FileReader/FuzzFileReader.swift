#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Fuzzing) import APITraceFormat

/// libFuzzer entry point: the input is the content of a trace file, plain or gzip.
///
/// The bytes are written to a temporary file and read back with `TraceFileReader`, with a small
/// read size so lines and gzip members straddle reads. A plain input is also compressed, so the
/// gzip path sees valid framing around the same text, and the two reads must agree line for line;
/// the compressed bytes cut in half (what a killed app leaves) must read without trapping and keep
/// no more lines than the whole file.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFileReader(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // At least 2: with reads of 1 byte the reader never sees both gzip magic bytes in its first
    // block and takes a gzip file for plain text (finding F1 in Docs/fuzzing.md); kept out of the way
    // so the runs reach deeper than that.
    let readSize = 2 + size % 61
    let asGiven = read(bytes, readSize: readSize)
    if size >= 2, bytes[0] == 0x1F, bytes[1] == 0x8B { return 0 }

    guard let compressed = try? FuzzingSupport.gzip(bytes) else { fatalError("gzip of \(size) bytes failed") }
    let viaGzip = read(compressed, readSize: readSize)
    guard viaGzip.lines == asGiven.lines, viaGzip.invalidLines == asGiven.invalidLines else {
        fatalError("plain and gzip reads differ: \(asGiven.lines.count) vs \(viaGzip.lines.count) lines, \(asGiven.invalidLines) vs \(viaGzip.invalidLines) invalid")
    }
    let cut = read(Array(compressed[0..<(compressed.count / 2)]), readSize: readSize)
    guard cut.lines.count <= asGiven.lines.count else {
        fatalError("a cut file kept \(cut.lines.count) lines, the whole file \(asGiven.lines.count)")
    }
    return 0
}

private let directory: String = {
    let path = "/tmp/apitrace-fuzz-\(getpid())"
    mkdir(path, 0o700)
    return path
}()

private func read(_ content: [UInt8], readSize: Int) -> (lines: [TraceLine], invalidLines: Int) {
    let path = directory + "/input.jsonl.gz"
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    guard fd >= 0 else { fatalError("cannot create \(path): errno \(errno)") }
    let written = content.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
    guard written == content.count else { fatalError("short write to \(path)") }

    var reader = TraceFileReader(path: path)
    reader.readSize = readSize
    var lines: [TraceLine] = []
    let result = reader.forEachLine { line, _ in lines.append(line) }
    return (lines, result.invalidLines)
}
