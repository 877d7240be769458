import APITraceFormat
import Foundation

/// Uploads waiting to be forwarded over OTLP: one file each in `.otlp-spool/` inside the
/// collector's folder, sent oldest first, bounded in bytes and in files.
///
/// A file is written to `.tmp-<sequence>`, `fsync`ed and renamed to
/// `<20-digit sequence>-<random>.spool`, then the folder is `fsync`ed: after a crash or a SIGKILL
/// the spool holds whole uploads only, and they are sent when the collector starts again. The
/// names end in `.spool`, not `.jsonl.gz`, so `report` and `export` of the collector's folder never
/// count an upload twice; the random part keeps a name from ever being used twice, so the
/// forwarder's progress (kept by path) can never be taken for another file's.
///
/// Past a bound the oldest uploads are dropped (and counted): an upload is never refused because
/// the endpoint is down.
final class OTLPSpool: @unchecked Sendable {
    /// One spooled upload.
    struct Entry: Sendable, Equatable {
        var sequence: UInt64
        var path: String
        var bytes: Int
    }

    /// The spool folder.
    let directory: String
    let maxBytes: Int
    let maxFiles: Int
    let metrics: OTLPForwardingMetrics

    // One condition guards everything below: the forwarder waits on it for new uploads and for its
    // backoff (so stopping wakes it).
    private let condition = NSCondition()
    /// Uploads on disk, by sequence.
    private var entries: [Entry] = []
    /// Uploads being written: their room is taken, they are not ready to send.
    private var reserved: [UInt64: Int] = [:]
    /// Bytes of `entries` and `reserved`.
    private var bytes = 0
    private var next: UInt64 = 1
    private var stopped = false

    static let folderName = ".otlp-spool"
    static let suffix = ".spool"
    private static let temporaryPrefix = ".tmp-"

    /// Opens (creating) the spool inside the collector's folder, removes the temporary files a
    /// crash left, and takes the uploads already there in order.
    init(collectorDirectory: String, maxBytes: Int, maxFiles: Int, metrics: OTLPForwardingMetrics) throws(CollectorSetupError) {
        directory = collectorDirectory + "/" + Self.folderName
        self.maxBytes = maxBytes
        self.maxFiles = maxFiles
        self.metrics = metrics
        guard maxBytes > 0, maxFiles > 0 else { throw CollectorSetupError("the OTLP spool's bounds must be positive") }
        if mkdir(directory, 0o750) != 0 && errno != EEXIST {
            throw CollectorSetupError("cannot create the OTLP spool \(directory): \(String(cString: strerror(errno)))")
        }
        guard access(directory, W_OK) == 0 else {
            throw CollectorSetupError("cannot write to the OTLP spool \(directory): \(String(cString: strerror(errno)))")
        }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        for name in names {
            let path = directory + "/" + name
            if name.hasPrefix(Self.temporaryPrefix) {
                unlink(path)
                continue
            }
            guard name.hasSuffix(Self.suffix), let dash = name.firstIndex(of: "-"), let sequence = UInt64(name[..<dash]) else { continue }
            // A symlink or anything but a regular file is not ours: left alone, never followed.
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
                  attributes[.type] as? FileAttributeType == .typeRegular,
                  let size = (attributes[.size] as? NSNumber)?.intValue else { continue }
            entries.append(Entry(sequence: sequence, path: path, bytes: size))
        }
        entries.sort { $0.sequence < $1.sequence }
        bytes = entries.reduce(0) { $0 + $1.bytes }
        next = (entries.last?.sequence ?? 0) + 1
        // Bounds lowered since the last run: the oldest go now.
        var evicted: [Entry] = []
        while entries.count > maxFiles || bytes > maxBytes {
            let gone = entries.removeFirst()
            bytes -= gone.bytes
            evicted.append(gone)
        }
        drop(evicted)
    }

    /// Paths of the uploads spooled now.
    var paths: [String] { condition.withLock { entries.map(\.path) } }

    /// Bytes and files in the spool now (those being written included).
    var usage: (bytes: Int, files: Int) { condition.withLock { (bytes, entries.count + reserved.count) } }

    /// Copies an upload into the spool, dropping the oldest uploads when it would pass a bound.
    /// Never throws: a copy that cannot be written is counted as dropped.
    func add(_ body: UnsafeRawBufferPointer) {
        let size = body.count
        guard size <= maxBytes else {
            metrics.recordDropped(.spoolFull, bytes: size)
            return
        }
        var evicted: [Entry] = []
        let sequence: UInt64? = condition.withLock {
            while entries.count + reserved.count + 1 > maxFiles || bytes + size > maxBytes {
                // The oldest, even while it is being sent: its sending stops before its next request.
                guard !entries.isEmpty else { break }
                let gone = entries.removeFirst()
                bytes -= gone.bytes
                evicted.append(gone)
            }
            // Only uploads still being written hold the room: this one is dropped instead.
            guard entries.count + reserved.count + 1 <= maxFiles, bytes + size <= maxBytes else { return nil }
            let sequence = next
            next += 1
            reserved[sequence] = size
            bytes += size
            return sequence
        }
        drop(evicted)
        guard let sequence else {
            metrics.recordDropped(.spoolFull, bytes: size)
            return
        }
        let name = String(repeating: "0", count: max(0, 20 - String(sequence).count)) + String(sequence) + "-" + UUID().uuidString + Self.suffix
        let path = directory + "/" + name
        let written = write(body, to: path, sequence: sequence)
        condition.withLock {
            reserved[sequence] = nil
            guard written else {
                bytes -= size
                return
            }
            let entry = Entry(sequence: sequence, path: path, bytes: size)
            let index = entries.firstIndex { $0.sequence > sequence } ?? entries.endIndex
            entries.insert(entry, at: index)
            condition.broadcast()
        }
        if written { metrics.recordSpooled(bytes: size) } else { metrics.recordDropped(.spoolWriteFailed, bytes: size) }
    }

    /// The oldest upload (it stays spooled until ``remove(_:)``); waits for one; nil once stopped.
    func nextToSend() -> Entry? {
        condition.withLock {
            while !stopped {
                if let first = entries.first { return first }
                condition.wait()
            }
            return nil
        }
    }

    /// False once the upload was dropped from the spool (a bound) or the spool stopped: its sending ends.
    func stillHolds(_ entry: Entry) -> Bool {
        condition.withLock { !stopped && entries.contains { $0.sequence == entry.sequence } }
    }

    /// The upload is done with (sent, or refused for good): removed.
    func remove(_ entry: Entry) {
        let held = condition.withLock {
            guard let index = entries.firstIndex(where: { $0.sequence == entry.sequence }) else { return false }
            bytes -= entries.remove(at: index).bytes
            return true
        }
        if held { unlink(entry.path) }
    }

    /// Waits `milliseconds`, or less if the spool stops; false once stopped.
    func pause(milliseconds: Double) -> Bool {
        let until = Date(timeIntervalSinceNow: milliseconds / 1000)
        return condition.withLock {
            while !stopped && condition.wait(until: until) {}
            return !stopped
        }
    }

    var isStopped: Bool { condition.withLock { stopped } }

    /// Wakes the forwarder to end.
    func stop() {
        condition.withLock {
            stopped = true
            condition.broadcast()
        }
    }

    private func drop(_ evicted: [Entry]) {
        for entry in evicted {
            unlink(entry.path)
            metrics.recordDropped(.spoolFull, bytes: entry.bytes)
        }
    }

    /// Writes the whole upload durably under its final name; false (nothing left behind) when it cannot.
    private func write(_ body: UnsafeRawBufferPointer, to path: String, sequence: UInt64) -> Bool {
        let temporary = directory + "/" + Self.temporaryPrefix + String(sequence) + "-" + UUID().uuidString
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o640)
        guard fd >= 0 else { return false }
        var offset = 0
        while offset < body.count {
            let n = Foundation.write(fd, body.baseAddress! + offset, body.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                close(fd)
                unlink(temporary)
                return false
            }
            offset += n
        }
        guard fsync(fd) == 0 else {
            close(fd)
            unlink(temporary)
            return false
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            return false
        }
        let folder = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folder >= 0 {
            fsync(folder)
            close(folder)
        }
        return true
    }
}
