import APITraceExport
import APITraceFormat
import Foundation

/// The durable record of one collector instance's ingest counters, so `/metrics` stays monotonic
/// across a crash or a SIGKILL with no loss and no double count: `.collectors/<instance>/` in the store.
///
/// Every collector sharing a store has an instance id of its own (claimed with an exclusive `flock`
/// of `.collectors/<instance>/lock` for its whole run) and counts only what it stored itself:
///
/// ```text
/// snapshot.json      the counters as of the end of log <generation> (written aside, fsynced, renamed)
/// counts-<gen>.log   T <seq> <journal> <sha-256> <start> <size> <file>   a segment about to be recorded as stored (fsynced)
///                    K <seq>                                             its count was added to the counters
///                    X <seq>                                             storing it failed: nothing was added
///                    N <series JSON>                                     series a scrape showed at 0
/// ```
///
/// A `T` line is written and `fsync`ed in the producer journal's critical section, before the
/// journal line that makes the segment stored (which names this instance: `C <instance> <sha-256>`);
/// `K` is written with the metrics' lock held while the counts are added, so the log's `K` order is
/// the order the counters saw. On start the snapshot is loaded, and every segment confirmed since
/// is counted again from the store (the stored bytes are the bytes that were counted); a `T` without
/// `K` or `X` (the process died between the two) is counted when the producer's journal records the
/// segment under this instance's name, and dropped otherwise. The log is cut into a new generation
/// and the snapshot rewritten every ``snapshotEvery`` segments, so a restart re-reads at most that many.
final class IngestCountLog: Sendable {
    /// Folder of the instances, hidden from every reader.
    static let folder = ".collectors"
    /// Segments between snapshots: a restart re-counts at most this many from the store.
    static let snapshotEvery = 512

    /// One open generation of the log; closed when the last writer lets go of it.
    final class LogFile: Sendable {
        let fd: Int32
        let generation: Int
        init(fd: Int32, generation: Int) { self.fd = fd; self.generation = generation }
        deinit { close(fd) }
    }

    private struct State {
        var file: LogFile
        var nextSeq: Int
        /// `T` lines written and not yet confirmed or aborted, carried into the next generation.
        var pending: [Int: String] = [:]
    }

    /// The instance id (letters, digits, `.`, `_`, `-`).
    let instance: String
    let directory: String
    private let lockFD: Int32
    private let state: Locked<State>

    /// What the snapshot holds.
    struct Snapshot: Codable {
        var generation: Int
        var nextSeq: Int
        var metrics: OpenMetricsExporter
        var files = 0
        var events = 0
        var invalidLines = 0
        var unreadable = 0
        var announced: [String] = []
    }

    /// A segment counted before the last start: where it is stored, to be counted again.
    struct Entry {
        var seq: Int
        var journal: String
        var digest: String
        var start: Int64
        var size: Int
        var file: String
    }

    /// What the instance had counted when it last ran.
    struct Recovered {
        var snapshot: Snapshot?
        /// Segments confirmed after the snapshot, in the order their counts were added.
        var confirmed: [Entry] = []
        /// Segments whose storing was under way when the process ended.
        var unconfirmed: [Entry] = []
        var announced: [String] = []
        /// Above every sequence number the log used.
        var nextSeq = 0
    }

    /// True for an instance id that can name a folder: 1 to 64 of letters, digits, `.`, `_` and `-`, not starting with `.`.
    static func isValid(instance: String) -> Bool {
        !instance.isEmpty && instance.utf8.count <= 64 && !instance.hasPrefix(".")
            && instance.utf8.allSatisfy { b in
                (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2E || b == 0x5F || b == 0x2D
            }
    }

    /// Claims the instance's folder in the store (refused while another running collector holds it)
    /// and reads what it recorded; ``start(after:)`` then opens a new generation.
    init(store: String, instance: String) throws(CollectorSetupError) {
        guard Self.isValid(instance: instance) else {
            throw CollectorSetupError("the instance id \"\(instance)\" must be 1 to 64 letters, digits, '.', '_' or '-' (not starting with '.')")
        }
        self.instance = instance
        directory = store + "/" + Self.folder + "/" + instance
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw CollectorSetupError("cannot create \(directory): \(error.localizedDescription)")
        }
        let fd = open(directory + "/lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o640)
        guard fd >= 0 else { throw CollectorSetupError("cannot open \(directory)/lock: \(String(cString: strerror(errno)))") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            throw CollectorSetupError(
                "another running collector on this store is instance \"\(instance)\" (\(directory)/lock is held): give each collector sharing a store its own --instance-id")
        }
        lockFD = fd
        state = Locked(State(file: LogFile(fd: -1, generation: 0), nextSeq: 0))
    }

    deinit {
        flock(lockFD, LOCK_UN)
        close(lockFD)
    }

    // MARK: - Reading back

    private func logPath(_ generation: Int) -> String { directory + "/counts-\(generation).log" }

    private func generations() -> [Int] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.compactMap { name -> Int? in
            guard name.hasPrefix("counts-"), name.hasSuffix(".log") else { return nil }
            return Int(name.dropFirst(7).dropLast(4))
        }.sorted()
    }

    /// A counters file through the one regular-file reader: a FIFO or a link planted at its name, or
    /// a file past 64 MiB (a generation holds at most 512 uploads' lines), is an error naming it, not
    /// a hang or unbounded memory at start.
    private func readCounters(_ path: String) throws(CollectorSetupError) -> [UInt8]? {
        switch RegularFile.read(path, limit: 64 << 20) {
        case .success(let bytes): return bytes
        case .failure(let refusal):
            throw CollectorSetupError("cannot read the counters of instance \(instance): \(refusal)")
        }
    }

    /// The snapshot and the segments recorded after it. A snapshot that cannot be read is an error
    /// naming the file (counting again from 0 would make Prometheus count everything twice).
    func recover() throws(CollectorSetupError) -> Recovered {
        var recovered = Recovered()
        let snapshotPath = directory + "/snapshot.json"
        if let data = try readCounters(snapshotPath).map({ Data($0) }) {
            do {
                recovered.snapshot = try JSONDecoder().decode(Snapshot.self, from: data)
            } catch {
                throw CollectorSetupError("cannot read the counters of instance \(instance) in \(snapshotPath): \(error); move the folder \(directory) away to start this instance's counters at 0")
            }
        }
        let after = recovered.snapshot?.generation ?? -1
        var pending: [Int: Entry] = [:]
        var done = Set<Int>()
        for generation in generations() where generation > after {
            guard let data = try readCounters(logPath(generation)).map({ Data($0) }) else { continue }
            // A torn last line (the process died while writing it) is left out.
            let end = data.lastIndex(of: 0x0A).map { $0 + 1 } ?? data.startIndex
            for line in data[data.startIndex..<end].split(separator: 0x0A) {
                let text = String(decoding: line, as: UTF8.self)
                if text.hasPrefix("N ") {
                    if let series = try? JSONDecoder().decode([String].self, from: Data(text.dropFirst(2).utf8)) {
                        recovered.announced += series
                    }
                    continue
                }
                let fields = text.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
                guard let kind = fields.first, fields.count >= 2, let seq = Int(fields[1]) else { continue }
                recovered.nextSeq = max(recovered.nextSeq, seq.addingSaturated(1))
                switch (kind, fields.count) {
                case ("T", 7):
                    guard !done.contains(seq), pending[seq] == nil, let start = Int64(fields[4]), let size = Int(fields[5]) else { continue }
                    pending[seq] = Entry(seq: seq, journal: fields[2], digest: fields[3], start: start, size: size, file: fields[6])
                case ("K", 2):
                    if let entry = pending.removeValue(forKey: seq) { recovered.confirmed.append(entry) }
                    done.insert(seq)
                case ("X", 2):
                    pending.removeValue(forKey: seq)
                    done.insert(seq)
                default:
                    continue
                }
            }
        }
        recovered.unconfirmed = pending.values.sorted { $0.seq < $1.seq }
        recovered.nextSeq = max(recovered.nextSeq, recovered.snapshot?.nextSeq ?? 0)
        return recovered
    }

    /// Opens a new generation after what was recovered (so nothing is appended to a torn line) and
    /// writes `snapshot` as covering everything before it; older generations are removed.
    func start(with snapshot: Snapshot) throws(CollectorSetupError) {
        let generation = max(snapshot.generation, generations().last ?? 0).addingSaturated(1)
        var snapshot = snapshot
        snapshot.generation = generation - 1
        let file: LogFile
        do throws(UploadRejection) {
            file = try openLog(generation)
            try write(snapshot)
        } catch {
            throw CollectorSetupError("cannot write the counters of instance \(instance) in \(directory): \(error.message)")
        }
        state.withLock { $0 = State(file: file, nextSeq: snapshot.nextSeq) }
        removeGenerations(through: generation - 1)
    }

    private func openLog(_ generation: Int) throws(UploadRejection) -> LogFile {
        let fd = open(logPath(generation), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0o640)
        guard fd >= 0 else { throw TraceStore.failure("cannot create \(logPath(generation))") }
        syncDirectory()
        return LogFile(fd: fd, generation: generation)
    }

    private func syncDirectory() {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }

    private func removeGenerations(through generation: Int) {
        for old in generations() where old <= generation { unlink(logPath(old)) }
    }

    private func write(_ snapshot: Snapshot) throws(UploadRejection) {
        let data: Data
        do { data = try JSONEncoder().encode(snapshot) } catch {
            throw UploadRejection(.storageFailed, "cannot encode the counters: \(error)")
        }
        let temporary = directory + "/.snapshot-\(UUID().uuidString)"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o640)
        guard fd >= 0 else { throw TraceStore.failure("cannot create \(temporary)") }
        defer { close(fd) }
        let ok = data.withUnsafeBytes { Self.writeAll(fd, $0) } && fsync(fd) == 0
        guard ok, rename(temporary, directory + "/snapshot.json") == 0 else {
            let error = TraceStore.failure("cannot write \(directory)/snapshot.json")
            unlink(temporary)
            throw error
        }
        syncDirectory()
    }

    private static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var written = 0
        while written < bytes.count {
            let n = Foundation.write(fd, bytes.baseAddress! + written, bytes.count - written)
            if n < 0 { if errno == EINTR { continue }; return false }
            written += n
        }
        return true
    }

    private static func append(_ line: String, to file: LogFile) -> Bool {
        var line = line
        return line.withUTF8 { writeAll(file.fd, UnsafeRawBufferPointer($0)) }
    }

    // MARK: - Writing

    /// Records that a segment is about to be recorded as stored (called under its producer journal's
    /// lock, before the journal line); returns its sequence number. The line is on disk when this returns.
    func intend(journal: String, digest: String, start: Int64, size: Int, file: String) throws(UploadRejection) -> Int {
        let (seq, log, written) = state.withLock { state -> (Int, LogFile, Bool) in
            let seq = state.nextSeq
            state.nextSeq = state.nextSeq.addingSaturated(1)
            let line = "T \(seq) \(journal) \(digest) \(start) \(size) \(file)\n"
            state.pending[seq] = line
            return (seq, state.file, Self.append(line, to: state.file))
        }
        guard written, fsync(log.fd) == 0 else {
            let error = TraceStore.failure("cannot write the counter log of instance \(instance)")
            abort(seq)
            throw error
        }
        return seq
    }

    /// The segment's count was added (called with the metrics' lock held, so `K` lines follow the order of the counters).
    func confirm(_ seq: Int) {
        state.withLock { state in
            state.pending.removeValue(forKey: seq)
            _ = Self.append("K \(seq)\n", to: state.file)
        }
    }

    /// Storing the segment failed after ``intend(journal:digest:start:size:file:)``: nothing is counted.
    func abort(_ seq: Int) {
        state.withLock { state in
            state.pending.removeValue(forKey: seq)
            _ = Self.append("X \(seq)\n", to: state.file)
        }
    }

    /// Series a scrape just showed at 0 for the first time (so a restart does not show them at 0 again).
    func announce(_ series: [String]) {
        guard !series.isEmpty, let data = try? JSONEncoder().encode(series) else { return }
        state.withLock { state in
            _ = Self.append("N " + String(decoding: data, as: UTF8.self) + "\n", to: state.file)
        }
    }

    /// Starts a new generation (with the lines still pending copied over) and returns the generation
    /// the snapshot about to be taken covers. Called with the metrics' lock held.
    func rotate() -> Int? {
        state.withLock { state -> Int? in
            guard let next = try? openLog(state.file.generation.addingSaturated(1)) else { return nil }
            for (_, line) in state.pending.sorted(by: { $0.key < $1.key }) { _ = Self.append(line, to: next) }
            fsync(next.fd)
            let covered = state.file.generation
            state.file = next
            return covered
        }
    }

    /// Writes a snapshot covering the generations up to its own and removes them (outside the metrics' lock).
    func save(_ snapshot: Snapshot) {
        var snapshot = snapshot
        snapshot.nextSeq = state.withLock { $0.nextSeq }
        do throws(UploadRejection) {
            try write(snapshot)
            removeGenerations(through: snapshot.generation)
        } catch {
            // The log keeps everything: the next snapshot, or the next start, covers it.
        }
    }
}
