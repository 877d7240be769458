import APITraceTestSupport
import APITraceFormat
import Foundation
import Synchronization
import Testing

private func logEvent(_ i: Int) -> TraceEvent {
    TraceEvent(.log(.init(level: "info", message: "event \(i)", metadata: ["seq": String(i)])))
}

private func sequenceNumbers(in files: [String]) -> (seqs: [Int], dropped: [TraceEvent.Dropped]) {
    var seqs: [Int] = []
    var dropped: [TraceEvent.Dropped] = []
    for file in files {
        TraceFileReader(path: file).forEachEvent { event in
            switch event.payload {
            case .log(let log): seqs.append(Int(log.metadata["seq"]!)!)
            case .dropped(let d): dropped.append(d)
            default: break
            }
        }
    }
    return (seqs, dropped)
}

@Suite("Trace file writer")
struct TraceFileWriterTests {
    @Test("events round-trip through a file that gzip -dc also reads line for line")
    func roundTripAndGzip() async throws {
        let dir = TemporaryDirectory()
        let writer = TraceFileWriter(configuration: .init(directory: dir.path, producer: "p1", app: "Otec", appVersion: "2.1"))
        for event in everyEventType { writer.append(event) }
        writer.close()
        let files = dir.traceFiles
        try #require(files.count == 1)
        #expect(TraceFileIdentity(fileName: files[0])?.producer == "p1")

        var read: [TraceEvent] = []
        let result = TraceFileReader(path: files[0]).forEachEvent { read.append($0) }
        #expect(result.warnings.isEmpty)
        #expect(read == everyEventType)
        #expect(result.header?.app == "Otec")
        #expect(result.header?.appVersion == "2.1")

        let gzip = try await runOffPool("/bin/gzip", ["-dc", files[0]])
        #expect(gzip.status == 0)
        let lines = String(decoding: gzip.stdout, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(lines.count == everyEventType.count + 1)
        #expect(lines.dropFirst().map { $0 } == everyEventType.map(\.jsonLine))
        for line in lines {
            #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) != nil)
        }
    }

    @Test("files are created with mode 0600 and left read-only (0400) by the owner alone once finished")
    func permissions() throws {
        let dir = TemporaryDirectory()
        let writer = TraceFileWriter(configuration: .init(directory: dir.path))
        writer.append(logEvent(0))
        writer.flush()
        let open = try FileManager.default.attributesOfItem(atPath: try #require(dir.traceFiles.first))
        #expect((open[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        writer.close()
        let finished = try FileManager.default.attributesOfItem(atPath: try #require(dir.traceFiles.first))
        #expect((finished[.posixPermissions] as? NSNumber)?.intValue == 0o400)
    }

    @Test("flush makes everything appended so far readable before the file is finished")
    func flushOnDemand() throws {
        let dir = TemporaryDirectory()
        let writer = TraceFileWriter(configuration: .init(directory: dir.path, flushInterval: .seconds(3600)))
        for i in 0..<500 { writer.append(logEvent(i)) }
        writer.flush()
        let file = try #require(writer.activeFilePath)
        var seqs: [Int] = []
        let result = TraceFileReader(path: file).forEachEvent { if case .log(let l) = $0.payload { seqs.append(Int(l.metadata["seq"]!)!) } }
        #expect(seqs == Array(0..<500))
        // The file is still open, so the reader says it was not finished.
        #expect(result.warnings.map(\.kind) == [.truncated(byteOffset: (try FileManager.default.attributesOfItem(atPath: file)[.size] as! NSNumber).intValue)])
        writer.close()
    }

    @Test("a full buffer drops and counts: events written plus events reported dropped equal events appended")
    func bufferOverflowAccounting() throws {
        let dir = TemporaryDirectory()
        let writer = TraceFileWriter(configuration: .init(directory: dir.path, bufferCapacity: 16, flushInterval: .seconds(3600)))
        let appended = 20_000
        for i in 0..<appended { writer.append(logEvent(i)) }
        writer.close()
        let stats = writer.statistics
        #expect(stats.droppedBufferFull > 0)
        let (seqs, dropped) = sequenceNumbers(in: dir.traceFiles)
        #expect(seqs.count + dropped.filter { $0.reason == "buffer_full" }.reduce(0) { $0 + $1.count } == appended)
        #expect(dropped.reduce(0) { $0 + $1.count } == stats.droppedBufferFull)
        #expect(seqs == seqs.sorted())
        #expect(stats.written == seqs.count)
    }

    @Test("events appended after close are counted as dropped")
    func appendAfterClose() {
        let dir = TemporaryDirectory()
        let writer = TraceFileWriter(configuration: .init(directory: dir.path))
        writer.close()
        writer.append(logEvent(1))
        #expect(writer.statistics.droppedBufferFull == 1)
    }

    @Test("an unwritable folder counts drops, says so once, and reports the loss when writing works again")
    func unwritableDirectory() throws {
        let dir = TemporaryDirectory()
        let blocker = dir.file("blocker")
        _ = FileManager.default.createFile(atPath: blocker, contents: Data("not a folder".utf8))
        let traces = blocker + "/traces"
        let messages = Mutex<[String]>([])
        let writer = TraceFileWriter(configuration: .init(
            directory: traces, flushInterval: .milliseconds(50),
            diagnostics: { message in messages.withLock { $0.append(message) } }))
        for i in 0..<100 { writer.append(logEvent(i)) }
        writer.flush()
        for i in 100..<150 { writer.append(logEvent(i)) }
        writer.flush()
        #expect(writer.statistics.droppedWriteFailed == 150)
        let said = messages.withLock { $0 }
        #expect(said.count == 1)
        #expect(said.first?.contains(traces) == true)

        // Make the folder writable: the loss is written into the trace itself.
        try FileManager.default.removeItem(atPath: blocker)
        try FileManager.default.createDirectory(atPath: traces, withIntermediateDirectories: true)
        writer.append(logEvent(150))
        writer.close()
        let files = try FileManager.default.contentsOfDirectory(atPath: traces).map { traces + "/" + $0 }
        let (seqs, dropped) = sequenceNumbers(in: files)
        #expect(seqs == [150])
        #expect(dropped == [.init(count: 150, reason: "write_failed")])
        #expect(messages.withLock { $0 }.count == 2)
    }

    @Test("rotation by size keeps every event, in order, across standalone files")
    func rotationBySize() async throws {
        let dir = TemporaryDirectory()
        let writer = TraceFileWriter(configuration: .init(directory: dir.path, flushInterval: .seconds(3600), maxFileBytes: 4096))
        for i in 0..<3000 {
            writer.append(logEvent(i))
            if i % 100 == 99 { writer.flush() }
        }
        writer.close()
        let files = dir.traceFiles
        #expect(files.count > 3)
        #expect(writer.statistics.filesStarted == files.count)
        for file in files {
            let result = TraceFileReader(path: file).forEachEvent { _ in }
            #expect(result.warnings.isEmpty, "\(file): \(result.warnings)")
            #expect(try await runOffPool("/bin/gzip", ["-t", file]).status == 0)
        }
        #expect(sequenceNumbers(in: files).seqs == Array(0..<3000))
    }

    @Test("rotation by age starts a new file")
    func rotationByAge() async throws {
        let dir = TemporaryDirectory()
        let writer = TraceFileWriter(configuration: .init(directory: dir.path, flushInterval: .milliseconds(20), maxFileAge: .milliseconds(100)))
        writer.append(logEvent(0))
        writer.flush()
        try await Task.sleep(for: .milliseconds(400))
        writer.append(logEvent(1))
        writer.close()
        #expect(dir.traceFiles.count == 2)
        #expect(sequenceNumbers(in: dir.traceFiles).seqs == [0, 1])
    }

    @Test("the file budget deletes the oldest finished files, counts them, and keeps the newest events")
    func fileBudget() throws {
        let dir = TemporaryDirectory()
        let writer = TraceFileWriter(configuration: .init(
            directory: dir.path, flushInterval: .seconds(3600), maxFileBytes: 2048, directoryFileBudget: 3))
        let appended = 3000
        for i in 0..<appended {
            writer.append(logEvent(i))
            if i % 50 == 49 { writer.flush() }
        }
        writer.close()
        let files = dir.traceFiles
        let stats = writer.statistics
        #expect(files.count <= 3)
        #expect(stats.filesDeleted == stats.filesStarted - files.count)
        #expect(stats.filesDeleted > 0)
        let (seqs, dropped) = sequenceNumbers(in: files)
        // What survives is the newest, contiguous tail of what was appended.
        #expect(seqs.last == appended - 1)
        #expect(seqs == Array((appended - seqs.count)..<appended))
        #expect(dropped.contains { $0.reason == "budget" && $0.count > 0 })
        let sequences = files.compactMap { TraceFileIdentity(fileName: $0)?.sequence }
        #expect(sequences == Array((stats.filesStarted - files.count + 1)...stats.filesStarted))
    }

    @Test("the byte budget keeps the folder under its size")
    func byteBudget() throws {
        let dir = TemporaryDirectory()
        let budget = 16 * 1024
        let writer = TraceFileWriter(configuration: .init(
            directory: dir.path, flushInterval: .seconds(3600), maxFileBytes: 4096, directoryByteBudget: budget))
        for i in 0..<6000 {
            writer.append(logEvent(i))
            if i % 50 == 49 { writer.flush() }
        }
        writer.close()
        let sizes = try dir.traceFiles.map { try FileManager.default.attributesOfItem(atPath: $0)[.size] as! NSNumber }
        #expect(sizes.reduce(0) { $0 + $1.intValue } <= budget)
        #expect(writer.statistics.eventsDeleted > 0)
    }

    @Test("a writer killed with SIGKILL leaves a file readable up to its last flush")
    func sigkill() async throws {
        let dir = TemporaryDirectory()
        // Let it write for a while, remembering how many events it had appended (it prints the count
        // of each batch it appended; ChildProcess reads its output on threads of its own).
        let producer = try ChildProcess(try builtProduct("trace-producer-fixture").path, [dir.path, "100"])
        let progress = { producer.lines.last.flatMap { Int($0) } ?? 0 }
        let deadline = ContinuousClock.now + .seconds(30)
        while progress() < 1500 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let appendedAtLeastOneSecondBeforeKill = progress()
        try await Task.sleep(for: .seconds(1))
        try await producer.kill(SIGKILL)
        #expect(producer.process.terminationReason == .uncaughtSignal)

        let files = dir.traceFiles
        try #require(files.count == 1)
        var seqs: [Int] = []
        let result = TraceFileReader(path: files[0]).forEachEvent { if case .log(let l) = $0.payload { seqs.append(Int(l.metadata["seq"]!)!) } }
        // Everything appended a whole second (ten flush intervals) before the kill is there, in order, with no gap.
        #expect(seqs.count >= appendedAtLeastOneSecondBeforeKill)
        #expect(seqs == Array(0..<seqs.count))
        #expect(result.warnings.count == 1)
        if case .truncated = result.warnings.first?.kind {} else { Issue.record("expected a truncation warning, got \(result.warnings)") }

        // gzip -dc reads the same events, then complains about the unfinished stream.
        let gzip = try await runOffPool("/bin/gzip", ["-dc", files[0]])
        let lines = String(decoding: gzip.stdout, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == seqs.count + 1)
        #expect(gzip.status != 0)
    }
}

@Suite("Trace file writer on a full disk")
struct TraceFileWriterDiskFullTests {
    /// A real, tiny tmpfs: mounting needs root, which CI and this project's machines have.
    @Test("a full disk drops and counts; what is on disk is exactly what was counted as written",
          .enabled(if: geteuid() == 0, "mounting a tmpfs needs root"))
    func diskFull() async throws {
        let dir = TemporaryDirectory()
        let mountPoint = dir.file("tiny")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mounted = try await runOffPool("/bin/mount", ["-t", "tmpfs", "-o", "size=96k", "tmpfs", mountPoint])
        try #require(mounted.status == 0, "mount failed: \(String(decoding: mounted.stderr, as: UTF8.self))")
        defer { _ = try? run("/bin/umount", [mountPoint]) }

        let messages = Mutex<[String]>([])
        let writer = TraceFileWriter(configuration: .init(
            directory: mountPoint + "/traces", flushInterval: .milliseconds(20),
            diagnostics: { message in messages.withLock { $0.append(message) } }))
        var rng = SystemRandomNumberGenerator()
        let appended = 400
        for i in 0..<appended {
            // Incompressible text so the disk fills after a few dozen events.
            let noise = (0..<1500).map { _ in Character(Unicode.Scalar(UInt8.random(in: 65...122, using: &rng))) }
            writer.append(TraceEvent(.log(.init(level: "info", message: String(noise), metadata: ["seq": String(i)]))))
            if i % 10 == 9 { writer.flush() }
        }
        writer.close()
        let stats = writer.statistics
        #expect(stats.droppedWriteFailed > 0)
        #expect(stats.written > 0)
        #expect(stats.written + stats.droppedWriteFailed + stats.droppedBufferFull == appended)
        #expect(messages.withLock { $0 }.first?.contains("No space left on device") == true)

        let files = try FileManager.default.contentsOfDirectory(atPath: mountPoint + "/traces").sorted().map { mountPoint + "/traces/" + $0 }
        var seqs: [Int] = []
        for file in files {
            TraceFileReader(path: file).forEachEvent { if case .log(let l) = $0.payload { seqs.append(Int(l.metadata["seq"]!)!) } }
        }
        #expect(seqs.count == stats.written)
        #expect(seqs == seqs.sorted())
    }
}
