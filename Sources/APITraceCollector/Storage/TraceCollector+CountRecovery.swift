import APITraceFormat
import Foundation

extension TraceCollector {
    /// Loads what this instance had counted when it last ran (``IngestCountLog``): the snapshot, then
    /// each segment confirmed since, counted again from the bytes stored, in the order it was counted;
    /// then each segment whose storing was under way when the process ended, counted when its
    /// producer's journal records it as stored by this instance. Starts a new log generation after them.
    static func recover(_ log: IngestCountLog, into ingest: IngestMetrics, store: TraceStore, validator: UploadValidator) throws(CollectorSetupError) {
        let recovered = try log.recover()
        ingest.restore(recovered.snapshot, announced: recovered.announced)
        for entry in recovered.confirmed {
            let file = storedFile(of: entry, store: store, instance: nil) ?? entry.file
            recount(entry, file: file, store: store, validator: validator, into: ingest)
        }
        for entry in recovered.unconfirmed {
            guard let file = storedFile(of: entry, store: store, instance: log.instance) else { continue }
            recount(entry, file: file, store: store, validator: validator, into: ingest)
        }
        var snapshot = ingest.snapshot(generation: recovered.snapshot?.generation ?? 0)
        snapshot.nextSeq = recovered.nextSeq
        try log.start(with: snapshot)
    }

    /// Where the entry's segment is stored now (a sealed file was renamed), from its producer's journal.
    /// With `instance`: only when the journal records the segment as stored by that instance, or, for a
    /// segment stored as a file of its own, when the file exists and no one recorded it (the process
    /// ended between the link and the journal line).
    private static func storedFile(of entry: IngestCountLog.Entry, store: TraceStore, instance: String?) -> String? {
        let path = store.directory + "/" + TraceStore.journalFolder + "/" + entry.journal + ".journal"
        guard !entry.journal.contains("/"), var journal = try? ProducerJournal.lock(path) else { return nil }
        defer { journal.unlock() }
        journal.replayPendingSeal(root: store.directory)
        let file = journal.digests[entry.digest]
        guard let instance else { return file }
        if let file { return journal.storedBy[entry.digest] == instance ? file : nil }
        if entry.start < 0, !entry.file.contains(".."), access(store.directory + "/" + entry.file, F_OK) == 0 { return entry.file }
        return nil
    }

    /// Counts the entry's stored bytes (a whole gzip file or one member run of an appended file) as the upload was counted.
    private static func recount(_ entry: IngestCountLog.Entry, file: String, store: TraceStore, validator: UploadValidator, into ingest: IngestMetrics) {
        guard !file.contains(".."), entry.size > 0 else { return }
        let fd = open(store.directory + "/" + file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: entry.size)
        var read = 0
        let start = off_t(max(0, entry.start))
        while read < bytes.count {
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + read, $0.count - read, start + off_t(read)) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            read += n
        }
        let tally = ingest.tally()
        let counted = bytes.withUnsafeBytes { body in Result { () throws(UploadRejection) in try validator.validate(body, counting: tally) } }
        if case .success = counted { ingest.addRecounted(tally) }
    }
}
