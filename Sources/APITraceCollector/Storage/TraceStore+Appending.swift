import APITraceFormat
import Crypto
import Foundation

/// What the store tells the collector's counter log (``IngestCountLog``) about a segment it is about to record.
struct SegmentCounting {
    /// The collector instance, named in the journal's `C` line.
    var instance: String
    /// (journal, digest, start offset in its file or -1 for a whole file, size, file): called under the journal's lock.
    var intend: (String, String, Int64, Int, String) throws(UploadRejection) -> Void
}

extension TraceStore {
    /// Folder of the producers' journals, hidden from every reader.
    static let journalFolder = ".producers"
    /// An open file no segment was appended to for this long is sealed (an hour: the cadence of sealing by hour).
    static let idleSealSeconds = 3600
    /// How often the collector looks for idle open files.
    static let idleSweepSeconds = 300

    /// Stores a validated segment (`body`, a complete gzip file) once: appended to its producer's
    /// open file, or alone (see ``TraceStore``). `sha256Hex` is the digest of the bytes received,
    /// which identifies the segment when it is sent again.
    ///
    /// The outcome names the segment as `<day>/<start>-<producer>-<16 hex of SHA-256>.jsonl.gz` (what
    /// uploaders check their receipt against, ``CollectorReceipt``), followed by ` (in <file>)` when
    /// it is held in a file of another name.
    /// `counting`, when given, is told just before the segment is recorded as stored (under the
    /// journal's lock), and the journal line names its instance (``IngestCountLog``).
    func store(_ body: UnsafeRawBufferPointer, header: TraceFileHeader, sha256Hex: String, counting: SegmentCounting? = nil) throws(UploadRejection) -> Outcome {
        let segment = Self.relativePath(header: header, sha256Hex: sha256Hex)
        func named(_ file: String) -> String { file == segment ? segment : segment + " (in " + file + ")" }
        switch try storeSegment(body, header: header, sha256Hex: sha256Hex, counting: counting) {
        case .stored(let file): return .stored(named(file))
        case .alreadyStored(let file): return .alreadyStored(named(file))
        }
    }

    private func storeSegment(_ body: UnsafeRawBufferPointer, header: TraceFileHeader, sha256Hex: String, counting: SegmentCounting?) throws(UploadRejection) -> Outcome {
        let journalName = Self.sanitize(producer: header.producer)
        func intend(_ start: Int64, _ file: String) throws(UploadRejection) {
            try counting?.intend(journalName, sha256Hex, start, body.count, file)
        }
        return try withJournal(of: header) { (journal: inout ProducerJournal) throws(UploadRejection) -> Outcome in
            if let relative = journal.digests[sha256Hex] { return .alreadyStored(relative) }
            let alone = Self.relativePath(header: header, sha256Hex: sha256Hex)
            if access(directory + "/" + alone, F_OK) == 0 { return .alreadyStored(alone) }
            let started = header.started.millisecondsSince1970
            let key = Self.headerKey(header)
            if var open = journal.open {
                try repair(&open)
                if started < open.started {
                    // Sent late: its producer's next file started at or before the open file.
                    let ended = TraceTimestamp(millisecondsSince1970: open.started)
                    let relative = Self.dayFolder(header.started) + "/" + TraceFileIdentity(
                        started: header.started, producer: Self.sanitize(producer: header.producer),
                        kind: .sealed(ended: ended, tag: String(sha256Hex.prefix(TraceFileIdentity.tagLength)))).fileName
                    return try storeAloneRecorded(body, relative: relative, digest: sha256Hex, in: &journal, counting: counting, intend: intend)
                }
                let later = started > open.latestSegment
                let sameHour = started / 3_600_000 == open.started / 3_600_000
                if later && (!sameHour || key != open.headerKey || open.committed >= sealBytes) {
                    try seal(open, ended: header.started, in: &journal)
                } else if key != open.headerKey {
                    return try storeAloneRecorded(body, relative: alone, digest: sha256Hex, in: &journal, counting: counting, intend: intend)
                } else {
                    try intend(open.committed, open.relative)
                    return try append(body, to: open, digest: sha256Hex, started: started, in: &journal, countedBy: counting?.instance)
                }
            }
            let relative = Self.dayFolder(header.started) + "/" + TraceFileIdentity(
                started: header.started, producer: Self.sanitize(producer: header.producer), kind: .open).fileName
            return try begin(relative, with: body, started: started, key: key, digest: sha256Hex, in: &journal, counting: counting, intend: intend)
        }
    }

    /// True when a segment with this digest is stored (a cut body is checked before it is finished).
    func contains(header: TraceFileHeader, sha256Hex: String) -> Bool {
        if access(directory + "/" + Self.relativePath(header: header, sha256Hex: sha256Hex), F_OK) == 0 { return true }
        let result = try? withJournal(of: header) { (journal: inout ProducerJournal) throws(UploadRejection) -> Bool in
            journal.digests[sha256Hex] != nil
        }
        return result ?? false
    }

    /// Seals the open files to which nothing was appended for `seconds` (by this machine's clock:
    /// only when to seal, never a file's span), under a name of unknown end. Returns how many.
    @discardableResult
    func sealIdle(olderThan seconds: Int) -> Int {
        let folder = directory + "/" + Self.journalFolder
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return 0 }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        var sealed = 0
        for name in names where name.hasSuffix(".journal") && !name.hasPrefix(".") {
            guard var journal = try? ProducerJournal.lock(folder + "/" + name) else { continue }
            defer { journal.unlock() }
            journal.replayPendingSeal(root: directory)
            guard var open = journal.open, let status = FileStatus(path: directory + "/" + open.relative),
                  now - status.modifiedMilliseconds >= Int64(seconds) * 1000 else { continue }
            do throws(UploadRejection) {
                try repair(&open)
                if open.committed == 0 {
                    unlink(directory + "/" + open.relative)
                    try record(["S", "-"], in: &journal)
                    continue
                }
                let identity = TraceFileIdentity(fileName: open.relative)
                let digest = String((open.firstDigest ?? "").dropFirst(TraceFileIdentity.digestLength).prefix(TraceFileIdentity.digestLength))
                guard let identity, digest.count == TraceFileIdentity.digestLength else { continue }
                let relative = Self.dayFolder(identity.started) + "/" + TraceFileIdentity(
                    started: identity.started, producer: identity.producer, kind: .stored(digest: digest)).fileName
                try record(["S", relative], in: &journal)
                journal.replayPendingSeal(root: directory)
                syncDirectory(directory + "/" + Self.dayFolder(identity.started))
                sealed += 1
            } catch {
                continue
            }
        }
        return sealed
    }

    // MARK: - Steps

    private func withJournal<T>(of header: TraceFileHeader, _ body: (inout ProducerJournal) throws(UploadRejection) -> T) throws(UploadRejection) -> T {
        let folder = directory + "/" + Self.journalFolder
        if mkdir(folder, 0o750) != 0, errno != EEXIST { throw Self.failure("cannot create \(folder)") }
        var journal: ProducerJournal
        do {
            journal = try ProducerJournal.lock(folder + "/" + Self.sanitize(producer: header.producer) + ".journal")
        } catch {
            errno = error.code
            throw Self.failure("cannot open the journal of producer \(Self.sanitize(producer: header.producer))")
        }
        defer { journal.unlock() }
        journal.replayPendingSeal(root: directory)
        return try body(&journal)
    }

    /// Cuts the open file back to its last recorded member: what a crash in the middle of an append left.
    private func repair(_ open: inout ProducerJournal.OpenFile) throws(UploadRejection) {
        let path = directory + "/" + open.relative
        guard let status = FileStatus(path: path) else {
            // Removed by hand: begin again at its start.
            open.committed = 0
            return
        }
        if status.size != open.committed {
            guard status.size > open.committed, truncate(path, off_t(open.committed)) == 0 else {
                throw Self.failure("cannot cut \(open.relative) back to its \(open.committed) recorded bytes (it has \(status.size))")
            }
        }
    }

    private func append(_ body: UnsafeRawBufferPointer, to open: ProducerJournal.OpenFile, digest: String, started: Int64, in journal: inout ProducerJournal, countedBy instance: String?) throws(UploadRejection) -> Outcome {
        let path = directory + "/" + open.relative
        let fd = Foundation.open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o640)
        guard fd >= 0 else { throw Self.failure("cannot open \(open.relative)") }
        defer { close(fd) }
        var written = 0
        while written < body.count {
            let n = pwrite(fd, body.baseAddress! + written, body.count - written, off_t(open.committed) + off_t(written))
            if n < 0 {
                if errno == EINTR { continue }
                let error = Self.failure("cannot append to \(open.relative)")
                ftruncate(fd, off_t(open.committed))
                throw error
            }
            written += n
        }
        guard fsync(fd) == 0 else {
            let error = Self.failure("cannot fsync \(open.relative)")
            ftruncate(fd, off_t(open.committed))
            throw error
        }
        try record(["A", digest, String(open.committed + Int64(body.count)), String(started)], in: &journal, countedBy: instance)
        return .stored(open.relative)
    }

    /// Begins an open file with its first segment: written aside and renamed in, so that no reader
    /// ever finds it empty; recorded before the rename (a crash between leaves a missing file, begun
    /// again by the next segment) and committed after it.
    private func begin(
        _ relative: String, with body: UnsafeRawBufferPointer, started: Int64, key: String, digest: String, in journal: inout ProducerJournal,
        counting: SegmentCounting?, intend: (Int64, String) throws(UploadRejection) -> Void
    ) throws(UploadRejection) -> Outcome {
        try ensureFolder(of: relative)
        let folder = directory + "/" + relative[..<relative.lastIndex(of: "/")!]
        let temporary = try writeAside(body, in: folder, permissions: 0o640)
        do throws(UploadRejection) { try record(["O", relative, String(started), key], in: &journal) } catch {
            unlink(temporary)
            throw error
        }
        guard rename(temporary, directory + "/" + relative) == 0 else {
            let error = Self.failure("cannot rename \(temporary) to \(relative)")
            unlink(temporary)
            throw error
        }
        syncDirectory(folder)
        try intend(0, relative)
        try record(["A", digest, String(body.count), String(started)], in: &journal, countedBy: counting?.instance)
        return .stored(relative)
    }

    private func seal(_ open: ProducerJournal.OpenFile, ended: TraceTimestamp, in journal: inout ProducerJournal) throws(UploadRejection) {
        guard open.committed > 0, let identity = TraceFileIdentity(fileName: open.relative) else {
            unlink(directory + "/" + open.relative)
            try record(["S", "-"], in: &journal)
            return
        }
        let tag = String((open.firstDigest ?? "00000000").prefix(TraceFileIdentity.tagLength))
        let relative = Self.dayFolder(identity.started) + "/" + TraceFileIdentity(
            started: identity.started, producer: identity.producer, kind: .sealed(ended: ended, tag: tag)).fileName
        try record(["S", relative], in: &journal)
        journal.replayPendingSeal(root: directory)
        syncDirectory(directory + "/" + Self.dayFolder(identity.started))
    }

    private func storeAloneRecorded(
        _ body: UnsafeRawBufferPointer, relative: String, digest: String, in journal: inout ProducerJournal,
        counting: SegmentCounting?, intend: (Int64, String) throws(UploadRejection) -> Void
    ) throws(UploadRejection) -> Outcome {
        if counting != nil {
            if access(directory + "/" + relative, F_OK) == 0 { return .alreadyStored(relative) }
            // Before the link: a file linked but not yet recorded is counted at restart when no one else recorded it.
            try intend(-1, relative)
        }
        let outcome = try storeAlone(body, relative: relative)
        let stored = if case .stored = outcome { true } else { false }
        try record(["D", digest, relative], in: &journal, countedBy: stored ? counting?.instance : nil)
        return outcome
    }

    private func record(_ fields: [String], in journal: inout ProducerJournal, countedBy instance: String? = nil) throws(UploadRejection) {
        do { try journal.record(fields, countedBy: instance) } catch {
            errno = error.code
            throw Self.failure("cannot write the journal \(journal.path)")
        }
    }

    func ensureFolder(of relative: String) throws(UploadRejection) {
        let folder = directory + "/" + relative[..<relative.lastIndex(of: "/")!]
        if mkdir(folder, 0o755) == 0 {
            syncDirectory(directory)
        } else if errno != EEXIST {
            throw Self.failure("cannot create \(folder)")
        }
    }

    static func dayFolder(_ started: TraceTimestamp) -> String {
        "dt=" + started.rfc3339.prefix(10)
    }

    /// The header's fields but its start: segments with the same key can share a file (one header context per file).
    static func headerKey(_ header: TraceFileHeader) -> String {
        let text = [String(header.version), header.producer, header.app ?? "\u{1}", header.appVersion ?? "\u{1}", header.host ?? "\u{1}"].joined(separator: "\u{0}")
        return SHA256.hash(data: Data(text.utf8)).prefix(8).map { String(format: "%02x", $0) }.joined()
    }
}
