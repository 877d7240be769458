public import Foundation

/// A built executable of this package, found next to the test bundle.
public func builtProduct(_ name: String) throws -> URL {
    var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for _ in 0..<4 {
        let candidate = dir.appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        dir.deleteLastPathComponent()
    }
    struct Missing: Error, CustomStringConvertible { let description: String }
    throw Missing(description: "\(name) was not built next to the tests (looked from \(CommandLine.arguments[0]))")
}

/// Runs a command to completion and returns its exit status and output, blocking the calling thread.
/// `environment` adds to (or replaces variables of) the test process's environment.
///
/// From a test, prefer ``runOffPool(_:_:stdin:environment:)``: every suite shares one process, and a test
/// that blocks one of the few threads of Swift's cooperative pool can stall another suite's
/// in-process server.
@discardableResult
public func run(
    _ executable: String, _ arguments: [String], stdin: Data? = nil, environment: [String: String] = [:]
) throws -> (status: Int32, stdout: Data, stderr: Data) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    let input = stdin.map { _ in Pipe() }
    if let input { process.standardInput = input }
    childSlots.wait()
    defer { childSlots.signal() }
    try process.run()
    if let stdin, let input {
        writeAll(stdin, to: input.fileHandleForWriting.fileDescriptor)
        try input.fileHandleForWriting.close()
    }
    // Read both pipes while the child runs so a full pipe cannot block it; on threads of their own,
    // not Dispatch's, which the in-process servers and URLSession depend on.
    let outReader = PipeReader(out), errReader = PipeReader(err)
    process.waitUntilExit()
    return (process.terminationStatus, outReader.wait(), errReader.wait())
}

/// How many children ``run(_:_:stdin:environment:)`` lets run at once in this test process: twice
/// the cores, or `APITRACE_TEST_CHILDREN`. Every suite shares the process, and with parallel suites
/// each starting CLI runs, dozens of CPU-bound children at once left the in-process servers and
/// URLSession tests minutes behind their own bounds (seen on 2 cores: 36 children alive, uploader
/// tests of 3 s failing after 150 s). Long-lived children (``ChildProcess``: collectors, receivers)
/// are not counted: they wait on the test, not the other way round.
let childSlots: DispatchSemaphore = {
    let configured = ProcessInfo.processInfo.environment["APITRACE_TEST_CHILDREN"].flatMap { Int($0) }
    return DispatchSemaphore(value: max(1, configured ?? 2 * ProcessInfo.processInfo.activeProcessorCount))
}()

/// ``run(_:_:stdin:environment:)`` on a thread of its own, so the test's task waits without blocking the pool.
@discardableResult
public func runOffPool(
    _ executable: String, _ arguments: [String], stdin: Data? = nil, environment: [String: String] = [:]
) async throws -> (status: Int32, stdout: Data, stderr: Data) {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Result { try run(executable, arguments, stdin: stdin, environment: environment) })
        }
    }
}

/// Reads a pipe to its end on a dedicated thread.
public final class PipeReader: @unchecked Sendable {
    private let done = NSCondition()
    private var data: Data?

    /// Starts reading.
    public init(_ pipe: Pipe) {
        let handle = pipe.fileHandleForReading
        Thread.detachNewThread { [self] in
            let read = readAll(from: handle.fileDescriptor)
            done.lock(); data = read; done.broadcast(); done.unlock()
        }
    }

    /// Everything the pipe held, once its writer closed it.
    public func wait() -> Data {
        done.lock(); defer { done.unlock() }
        while data == nil { done.wait() }
        return data!
    }
}

// Foundation's `FileHandle.write(_:)` and `readDataToEndOfFile()` trap when a signal interrupts the
// call (EINTR), and with a suite starting and signalling many children one does now and then: the
// pipes are written and read with the system calls, again after an interruption.

/// Writes all of `data` to `fd`; stops early only when the reader is gone.
func writeAll(_ data: Data, to fd: Int32) {
    data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
        guard let base = raw.baseAddress else { return }
        var offset = 0
        while offset < raw.count {
            let n = write(fd, base + offset, raw.count - offset)
            if n > 0 { offset += n } else if n < 0, errno == EINTR { continue } else { return }
        }
    }
}

/// Everything `fd` yields until its end.
func readAll(from fd: Int32) -> Data {
    var result = Data()
    while true {
        let chunk = readChunk(from: fd)
        if chunk.isEmpty { return result }
        result.append(chunk)
    }
}

/// The next bytes `fd` yields (up to 64 KiB, waiting for them); empty at its end.
func readChunk(from fd: Int32) -> Data {
    var buffer = [UInt8](repeating: 0, count: 64 << 10)
    while true {
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n > 0 { return Data(buffer[0..<n]) }
        if n < 0, errno == EINTR { continue }
        return Data()
    }
}
