import Foundation

/// Writes events to compressed trace files from a background thread.
///
/// ``append(_:)`` only takes a lock for a few nanoseconds to queue the event; a background
/// thread encodes, compresses and writes. Every ``Configuration/flushInterval`` the stream is
/// flushed with `Z_SYNC_FLUSH`, so a process killed at any moment leaves a file that `gzip -dc`
/// and ``TraceFileReader`` read up to the last flush.
///
/// A file being written is writable and held with an exclusive `flock`; a finished file is
/// read-only. When a writer starts, it finishes the files a killed run left in its folder
/// (writable, held by nobody): their complete lines become a complete gzip file, so nothing a
/// killed app flushed is lost. A file's header `started` (and the time in its name) is never
/// later than its first event.
///
/// ```swift
/// let writer = TraceFileWriter(configuration: .init(directory: "traces", app: "Otec"))
/// writer.append(TraceEvent(.log(.init(level: "info", message: "started"))))
/// writer.close()
/// ```
///
/// Nothing is lost silently: when the buffer is full or the disk refuses a write, events are
/// dropped and counted, and a `dropped` event with the count is written as soon as possible.
public final class TraceFileWriter: @unchecked Sendable {
    /// The configuration the writer was created with.
    public let configuration: Configuration

    // Shared with callers, guarded by `condition`.
    private let condition = NSCondition()
    private var pending: [TraceEvent] = []
    private var spare: [TraceEvent] = []
    private var droppedBufferFull = 0
    private var flushRequested = 0
    private var flushCompleted = 0
    private var finishRequested = 0
    private var finishCompleted = 0
    private var lastFinishedPath: String?
    private var closing = false
    private var stopped = false
    private var stats = Statistics()
    private var activePath: String?
    private let wakeThreshold: Int

    // Owned by the writer thread.
    private var file: OpenFile?
    private var sequence = 0
    private var unreportedDrops: [String: Int] = [:]
    private var failing = false
    private var output = JSONOutput()
    private var compressed: [UInt8] = []

    private struct OpenFile {
        var fd: Int32
        var path: String
        var deflater: GzipDeflater
        var opened: ContinuousClock.Instant
        /// Bytes written to the file so far.
        var bytesOnDisk: Int = 0
        /// File size at the last successful flush: what a reader is sure to decode.
        var syncedBytes: Int = 0
        /// Events compressed since the last flush; counted as written only once a flush succeeds.
        var unsyncedEvents = 0
        /// Drop reports compressed since the last flush, to report again if that data is lost.
        var unsyncedDrops: [String: Int] = [:]
        /// True once a flush wrote at least one line after the header.
        var holdsEvents = false
    }

    /// Creates the writer and starts its background thread. Files are created on the first event.
    public init(configuration: Configuration) {
        self.configuration = configuration
        wakeThreshold = max(1, configuration.bufferCapacity / 2)
        pending.reserveCapacity(configuration.bufferCapacity)
        let thread = Thread { [self] in run() }
        thread.name = "apitrace.writer"
        thread.start()
    }

    /// Queues an event. Never blocks on I/O; when the buffer is full the event is dropped and counted.
    public func append(_ event: consuming TraceEvent) {
        condition.lock()
        stats.appended += 1
        if closing || pending.count >= configuration.bufferCapacity {
            droppedBufferFull += 1
            stats.droppedBufferFull += 1
        } else {
            pending.append(event)
            if pending.count == wakeThreshold { condition.broadcast() }
        }
        condition.unlock()
    }

    /// Writes everything queued so far, ends it with a sync flush and `fsync`s the file, waiting until it is done.
    ///
    /// When it returns, every event appended before the call is on disk: it survives the process
    /// being killed and the device losing power. The `fsync` runs on the writer's thread; the
    /// caller only waits. The periodic flush every ``Configuration/flushInterval`` does not
    /// `fsync`: what it wrote survives the process being killed (it is in the kernel's cache),
    /// not a power loss or kernel crash that comes before the kernel writes it back.
    public func flush() {
        condition.lock()
        flushRequested += 1
        let ticket = flushRequested
        condition.broadcast()
        while flushCompleted < ticket && !stopped { condition.wait() }
        condition.unlock()
    }

    /// Writes everything queued and finishes the current file now, if it holds events, waiting until it is done.
    ///
    /// Returns the path of the finished file (read-only, complete, ready to upload), or `nil` when no
    /// file was open: nothing was appended since the last file was finished. The next event starts a
    /// new file. `TraceUploader` (APITraceUpload) calls this on its segment cadence so a fleet's data is minutes old,
    /// not up to ``Configuration/maxFileAge``; an app can call it too, e.g. before it is suspended.
    /// Blocks the caller while the writer's thread finishes and `fsync`s the file.
    @discardableResult
    public func finishCurrentFile() -> String? {
        condition.lock()
        finishRequested += 1
        let ticket = finishRequested
        condition.broadcast()
        while finishCompleted < ticket && !stopped { condition.wait() }
        let path = finishCompleted >= ticket ? lastFinishedPath : nil
        condition.unlock()
        return path
    }

    /// Writes everything queued, finishes the current file and stops the background thread.
    /// Events appended afterwards are dropped and counted.
    public func close() {
        condition.lock()
        closing = true
        condition.broadcast()
        while !stopped { condition.wait() }
        condition.unlock()
    }

    /// What the writer has done so far.
    public var statistics: Statistics {
        condition.lock(); defer { condition.unlock() }
        return stats
    }

    /// Path of the file being written, if one is open. Every other trace file in the folder is finished.
    public var activeFilePath: String? {
        condition.lock(); defer { condition.unlock() }
        return activePath
    }

    // MARK: - Writer thread

    private func run() {
        finishLeftovers()
        let clock = ContinuousClock()
        var nextFlush = clock.now.advanced(by: configuration.flushInterval)
        var dirty = false
        while true {
            condition.lock()
            while pending.count < wakeThreshold && flushRequested == flushCompleted && finishRequested == finishCompleted
                && !closing && clock.now < nextFlush {
                let remaining = clock.now.duration(to: nextFlush)
                _ = condition.wait(until: Date(timeIntervalSinceNow: max(0.001, remaining.inSeconds)))
            }
            swap(&pending, &spare)
            let dropped = droppedBufferFull
            droppedBufferFull = 0
            let ticket = flushRequested
            let wantsDisk = flushRequested > flushCompleted
            let finishTicket = finishRequested
            let wantsFinish = finishRequested > finishCompleted
            let finishing = closing
            condition.unlock()

            if dropped > 0 { unreportedDrops["buffer_full", default: 0] += dropped }
            // A file past its age takes no new events: they start the next file.
            if let file, !spare.isEmpty, clock.now - file.opened >= configuration.maxFileAge { finishFile() }
            if !spare.isEmpty || !unreportedDrops.isEmpty {
                write(spare)
                dirty = true
            }
            spare.removeAll(keepingCapacity: true)

            let due = clock.now >= nextFlush
            if dirty && (due || wantsDisk || finishing || wantsFinish) {
                syncFlush()
                dirty = false
            }
            if wantsDisk, let file { _ = fsync(file.fd) }
            if due { nextFlush = clock.now.advanced(by: configuration.flushInterval) }
            if let file, clock.now - file.opened >= configuration.maxFileAge || file.deflater.totalOut >= configuration.maxFileBytes {
                finishFile()
            }

            var finishedPath: String?
            if wantsFinish, let current = file, current.holdsEvents {
                finishFile()
                // A failed trailer write abandons the file: nothing finished to hand over.
                if FileStatus(path: current.path) != nil { finishedPath = current.path }
            }

            condition.lock()
            flushCompleted = max(flushCompleted, ticket)
            if wantsFinish {
                finishCompleted = max(finishCompleted, finishTicket)
                lastFinishedPath = finishedPath
            }
            if finishing {
                condition.unlock()
                finishFile()
                condition.lock()
                stopped = true
                condition.broadcast()
                condition.unlock()
                return
            }
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Encodes and compresses a batch into the current file, opening one when needed.
    private func write(_ events: [TraceEvent]) {
        // The header's `started` is no later than the first event, which was timestamped before it reached this thread.
        if file == nil { openFile(firstEvent: events.lazy.map(\.timestamp).min()) }
        guard file != nil else {
            record(failedEvents: events.count)
            return
        }
        let reports = unreportedDrops
        unreportedDrops.removeAll()
        output.bytes.removeAll(keepingCapacity: true)
        for (reason, count) in reports.sorted(by: { $0.key < $1.key }) {
            TraceEvent(.dropped(.init(count: count, reason: reason))).encode(to: &output)
            output.bytes.append(0x0A)
        }
        for event in events {
            event.encode(to: &output)
            output.bytes.append(0x0A)
        }
        compressed.removeAll(keepingCapacity: true)
        output.bytes.withUnsafeBytes { file!.deflater.compress($0, flush: .none, into: &compressed) }
        if writeCompressed() {
            file!.unsyncedEvents += events.count
            file!.unsyncedDrops.merge(reports, uniquingKeysWith: +)
        } else {
            unreportedDrops.merge(reports, uniquingKeysWith: +)
            record(failedEvents: events.count)
        }
    }

    /// Ends the pending data with `Z_SYNC_FLUSH` (or the gzip trailer) so readers can decode all of it.
    private func syncFlush(finish: Bool = false) {
        guard let current = file else { return }
        compressed.removeAll(keepingCapacity: true)
        current.deflater.compress(UnsafeRawBufferPointer(start: nil, count: 0), flush: finish ? .finish : .sync, into: &compressed)
        guard writeCompressed(), var synced = file else { return }
        condition.lock(); stats.written += synced.unsyncedEvents; condition.unlock()
        synced.syncedBytes = synced.bytesOnDisk
        synced.holdsEvents = synced.holdsEvents || synced.unsyncedEvents > 0 || !synced.unsyncedDrops.isEmpty
        synced.unsyncedEvents = 0
        synced.unsyncedDrops.removeAll()
        file = synced
    }

    /// Writes `compressed` to the open file; on failure abandons the file and reports.
    private func writeCompressed() -> Bool {
        guard let current = file else { return false }
        var offset = 0
        while offset < compressed.count {
            let n = compressed.withUnsafeBytes { Foundation.write(current.fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                fail("cannot write \(current.path): \(String(cString: strerror(errno)))")
                abandonFile()
                return false
            }
            offset += n
            file!.bytesOnDisk += n
        }
        return true
    }

    /// After a failed write: cuts the file back to its last flush point, so what is on disk is exactly
    /// what was counted as written, and counts the unflushed events as dropped.
    private func abandonFile() {
        guard let current = file else { return }
        if !current.holdsEvents {
            unlink(current.path)
        } else {
            _ = ftruncate(current.fd, off_t(current.syncedBytes))
        }
        Foundation.close(current.fd)
        file = nil
        setActive(nil)
        unreportedDrops.merge(current.unsyncedDrops, uniquingKeysWith: +)
        record(failedEvents: current.unsyncedEvents)
    }

    private func record(failedEvents count: Int) {
        guard count > 0 else { return }
        unreportedDrops["write_failed", default: 0] += count
        condition.lock(); stats.droppedWriteFailed += count; condition.unlock()
    }

    private func fail(_ message: String) {
        // One line per failure streak, not one per second.
        if !failing { configuration.diagnostics(message + "; dropping trace events until writing works again (they are counted)") }
        failing = true
    }

    private func openFile(firstEvent: TraceTimestamp?) {
        let dir = configuration.directory
        if mkdir(dir, 0o700) != 0 && errno != EEXIST {
            // The parent may be missing too.
            try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        for _ in 0..<100 {
            sequence += 1
            let now = TraceTimestamp.now()
            let started = firstEvent.map { min($0, now) } ?? now
            let name = TraceFileIdentity(started: started, producer: configuration.producer, sequence: sequence)
            let path = (dir.hasSuffix("/") ? dir : dir + "/") + name.fileName
            // Named active before it exists, so an uploader never takes the new file for a finished one.
            setActive(path)
            let fd = Foundation.open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0o600)
            if fd < 0 {
                setActive(nil)
                if errno == EEXIST { continue }
                fail("cannot create a trace file in \(dir): \(String(cString: strerror(errno)))")
                return
            }
            // Held while the file is written: whoever finds the file unlocked and writable knows its writer died.
            _ = flock(fd, LOCK_EX)
            guard let deflater = try? GzipDeflater(level: configuration.compressionLevel) else {
                Foundation.close(fd)
                unlink(path)
                setActive(nil)
                fail("zlib could not start")
                return
            }
            file = OpenFile(fd: fd, path: path, deflater: deflater, opened: .now)
            var header = JSONOutput()
            TraceFileHeader(
                producer: configuration.producer, app: configuration.app, appVersion: configuration.appVersion,
                host: configuration.host, started: started
            ).encode(to: &header)
            header.bytes.append(0x0A)
            compressed.removeAll(keepingCapacity: true)
            header.bytes.withUnsafeBytes { deflater.compress($0, flush: .none, into: &compressed) }
            guard writeCompressed() else { return }
            // A file holding only its header counts as flushed: cutting it back leaves a valid start.
            syncFlush()
            guard file != nil else { return }
            if failing { configuration.diagnostics("writing traces to \(dir) works again") }
            failing = false
            condition.lock(); stats.filesStarted += 1; condition.unlock()
            return
        }
        fail("cannot create a trace file in \(dir): too many files with the same name")
    }

    /// Ends the gzip member, closes the file and enforces the folder's budgets.
    private func finishFile() {
        guard file != nil else { return }
        syncFlush(finish: true)
        if let still = file {
            // Read-only marks it finished; the fsync makes the trailer as durable as the name.
            _ = fchmod(still.fd, 0o400)
            _ = fsync(still.fd)
            Foundation.close(still.fd)
            file = nil
        }
        setActive(nil)
        enforceBudgets()
    }

    private func setActive(_ path: String?) {
        condition.lock(); activePath = path; condition.unlock()
    }

    /// Deletes the oldest finished files until the folder fits its byte and file budgets.
    private func enforceBudgets() {
        let dir = configuration.directory
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else { return }
        var files: [(path: String, size: Int)] = names
            .filter { !$0.hasPrefix(".") && ($0.hasSuffix(".jsonl.gz") || $0.hasSuffix(".jsonl")) }
            .sorted()
            .map { name in
                let path = (dir.hasSuffix("/") ? dir : dir + "/") + name
                var info = stat()
                return (path, stat(path, &info) == 0 ? Int(info.st_size) : 0)
            }
        var total = files.reduce(0) { $0 + $1.size }
        var deletedFiles = 0
        var deletedEvents = 0
        while !files.isEmpty && (total > configuration.directoryByteBudget || files.count > configuration.directoryFileBudget) {
            let oldest = files.removeFirst()
            if oldest.path == file?.path { continue }
            let events = TraceFileReader(path: oldest.path).forEachRawLine { _, _ in true }.lines - 1
            guard unlink(oldest.path) == 0 else { continue }
            total -= oldest.size
            deletedFiles += 1
            deletedEvents += max(0, events)
        }
        guard deletedFiles > 0 else { return }
        unreportedDrops["budget", default: 0] += deletedEvents
        condition.lock()
        stats.filesDeleted += deletedFiles
        stats.eventsDeleted += deletedEvents
        condition.unlock()
    }

    /// Finishes the files a killed run left in the folder (see ``finishLeftover(path:compressionLevel:)``).
    private func finishLeftovers() {
        let dir = configuration.directory
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else { return }
        let prefix = dir.hasSuffix("/") ? dir : dir + "/"
        for name in names.sorted() where !name.hasPrefix(".") && name.hasSuffix(".jsonl.gz") {
            switch Self.finishLeftover(path: prefix + name, compressionLevel: configuration.compressionLevel) {
            case .salvaged(let salvage):
                condition.lock(); stats.filesFinishedAfterKill += 1; condition.unlock()
                configuration.diagnostics(
                    "finished \(name), left by a killed run: kept \(salvage.keptLines) lines, dropped \(salvage.droppedBytes) bytes of an incomplete last line")
            case .deleted:
                configuration.diagnostics("deleted \(name), left by a killed run before its header was complete")
            case .failed(let reason):
                configuration.diagnostics(reason)
            case .finished, .complete, .locked:
                break
            }
        }
        // Temporary files of a finishing interrupted by another kill.
        for name in names where name.hasPrefix(Self.salvagePrefix) || AtomicFileWriter.isTemporary(name, ofTargetsEndingIn: ".jsonl.gz") {
            if let status = FileStatus(path: prefix + name), status.modifiedSeconds < Date().timeIntervalSince1970 - 600 {
                unlink(prefix + name)
            }
        }
    }
}
