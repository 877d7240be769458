import APITraceTestSupport
import APITraceFormat
import Foundation
import Synchronization
import Testing

/// The writer's promises about time and about the files of killed runs, checked on real files and a real SIGKILLed child.
@Suite("Trace file writer: start time and killed runs")
struct TraceFileWriterRecoveryTests {
    private static func seqs(_ file: String) -> (seqs: [Int], result: TraceFileReader.Result) {
        var seqs: [Int] = []
        let result = TraceFileReader(path: file).forEachEvent { if case .log(let l) = $0.payload, let s = l.metadata["seq"].flatMap(Int.init) { seqs.append(s) } }
        return (seqs, result)
    }

    private static func mode(_ path: String) throws -> Int {
        try #require((try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue)
    }

    @Test("the header's started, and the time in the file name, are no later than the first event, even one stamped before the file opened")
    func startedNoLaterThanFirstEvent() throws {
        let dir = TemporaryDirectory()
        let writer = TraceFileWriter(configuration: .init(directory: dir.path, producer: "skew", maxFileAge: .milliseconds(1)))
        // Events are stamped by the app before the writer's thread opens a file for them: 3 s and 1.5 s ago here.
        let early = TraceTimestamp.now().adding(milliseconds: -3000)
        writer.append(TraceEvent(timestamp: early.adding(milliseconds: 1500), .log(.init(level: "info", message: "second"))))
        writer.append(TraceEvent(timestamp: early, .log(.init(level: "info", message: "first"))))
        writer.flush()
        Thread.sleep(forTimeInterval: 0.01)  // the first file is now past its 1 ms age: the next event starts a new one
        writer.append(TraceEvent(timestamp: TraceTimestamp.now().adding(milliseconds: -2000), .log(.init(level: "info", message: "next file"))))
        writer.close()
        let files = dir.traceFiles
        try #require(files.count == 2)
        for file in files {
            var first: TraceTimestamp?
            let result = TraceFileReader(path: file).forEachEvent { event in first = first.map { min($0, event.timestamp) } ?? event.timestamp }
            let started = try #require(result.header?.started)
            let earliest = try #require(first)
            #expect(started <= earliest, "\(file): started \(started) after its earliest event \(earliest)")
            let named = try #require(TraceFileIdentity(fileName: file)).started
            #expect(named <= earliest)
            #expect(named.millisecondsSince1970 / 1000 == started.millisecondsSince1970 / 1000)
        }
    }

    @Test("a file is writable while written and read-only once finished")
    func finishedFilesAreReadOnly() throws {
        let dir = TemporaryDirectory()
        let writer = TraceFileWriter(configuration: .init(directory: dir.path))
        writer.append(TraceEvent(.log(.init(level: "info", message: "x"))))
        writer.flush()
        let active = try #require(writer.activeFilePath)
        #expect(try Self.mode(active) == 0o600)
        writer.close()
        #expect(try Self.mode(active) == 0o400)
    }

    @Test("a second writer in the folder leaves the file a live writer holds alone")
    func liveFileIsLeftAlone() throws {
        let dir = TemporaryDirectory()
        let first = TraceFileWriter(configuration: .init(directory: dir.path, producer: "live"))
        for i in 0..<100 { first.append(TraceEvent(.log(.init(level: "info", message: "e", metadata: ["seq": String(i)])))) }
        first.flush()
        let active = try #require(first.activeFilePath)
        let second = TraceFileWriter(configuration: .init(directory: dir.path, producer: "other", diagnostics: { _ in }))
        second.flush()
        #expect(second.statistics.filesFinishedAfterKill == 0)
        #expect(try Self.mode(active) == 0o600)
        for i in 100..<200 { first.append(TraceEvent(.log(.init(level: "info", message: "e", metadata: ["seq": String(i)])))) }
        first.close()
        second.close()
        let read = Self.seqs(active)
        #expect(read.seqs == Array(0..<200))
        #expect(read.result.warnings.isEmpty)
    }

    @Test("the next writer finishes the file of a SIGKILLed one: every flushed event kept, a complete gzip file, read-only")
    func finishesFileOfKilledRun() async throws {
        let dir = TemporaryDirectory()
        let producer = try ChildProcess(try builtProduct("trace-producer-fixture").path, [dir.path, "20"])
        try await Task.sleep(for: .milliseconds(100))
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline, (dir.traceFiles.first.map { Self.seqs($0).seqs.count } ?? 0) < 300 {
            try await Task.sleep(for: .milliseconds(50))
        }
        try await producer.kill(SIGKILL)
        let files = dir.traceFiles
        try #require(files.count == 1)
        let cut = Self.seqs(files[0])
        try #require(cut.seqs.count >= 300)
        if case .truncated = cut.result.warnings.first?.kind {} else { Issue.record("expected a cut file, got \(cut.result.warnings)") }
        #expect(try Self.mode(files[0]) == 0o600)

        let messages = Mutex<[String]>([])
        let next = TraceFileWriter(configuration: .init(directory: dir.path, producer: "next", diagnostics: { m in messages.withLock { $0.append(m) } }))
        next.flush()
        #expect(next.statistics.filesFinishedAfterKill == 1)
        let finished = Self.seqs(files[0])
        #expect(finished.seqs == cut.seqs)
        #expect(finished.seqs == Array(0..<finished.seqs.count))
        #expect(finished.result.warnings.isEmpty, "\(finished.result.warnings)")
        #expect(try Self.mode(files[0]) == 0o400)
        let gzip = try await runOffPool("/bin/gzip", ["-t", files[0]])
        #expect(gzip.status == 0, "gzip -t: \(String(decoding: gzip.stderr, as: UTF8.self))")
        #expect(messages.withLock { $0 }.contains { $0.contains("left by a killed run") && $0.contains("kept \(cut.seqs.count + 1) lines") })
        next.close()
    }

    @Test("a FIFO and a /dev/zero link named as a killed run's files are left alone and named; the writer starts and writes")
    func leftoversThatAreNotFilesDoNotBlockTheWriter() async throws {
        let dir = TemporaryDirectory()
        let fifo = dir.file("20000101T000000Z-fifo-0001.jsonl.gz"), zero = dir.file("20000101T000000Z-zero-0001.jsonl.gz")
        #expect(mkfifo(fifo, 0o644) == 0)
        try FileManager.default.createSymbolicLink(atPath: zero, withDestinationPath: "/dev/zero")
        let messages = Mutex<[String]>([])
        let writer = TraceFileWriter(configuration: .init(directory: dir.path, producer: "next", diagnostics: { m in messages.withLock { $0.append(m) } }))
        // The writer's thread finishes leftovers before anything else: if it blocked on the FIFO,
        // this flush would never return, so it runs on a thread of its own with a deadline.
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            writer.append(TraceEvent(.log(.init(level: "info", message: "after the leftovers"))))
            writer.flush()
            done.signal()
        }
        let finished = await Task.detached { done.wait(timeout: .now() + 30) == .success }.value
        try #require(finished, "the writer did not flush within 30 s")
        writer.close()
        let logged = messages.withLock { $0 }
        #expect(logged.contains { $0.contains(fifo) && $0.contains("FIFO") }, "\(logged)")
        #expect(logged.contains { $0.contains(zero) && $0.contains("symbolic link") }, "\(logged)")
        var info = stat()
        #expect(lstat(fifo, &info) == 0 && (info.st_mode & S_IFMT) == S_IFIFO)
        #expect(dir.traceFiles.filter { $0.contains("-next-") }.count == 1)
    }
}
