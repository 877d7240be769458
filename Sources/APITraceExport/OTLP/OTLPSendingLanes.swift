import Foundation

/// The sending side of an ``OTLPExport``: one lane per group of reading threads, each lane sending
/// its queue's batches one after the other, and the lanes sending at once.
///
/// Exactly-once holds because a lane never has two batches in flight: a reader's files are read one
/// after the other, so each file's batches go through one lane, and a batch is sent only once the
/// one before it (of the same file, or of an earlier file of that reader) was accepted. A refusal on
/// one lane stops every lane before its next batch; batches already in flight on other lanes finish
/// and, when accepted, are marked as any other (they are of other files, whose earlier batches were
/// all accepted). What the `s30b-send` attempt did instead, several batches of one file in flight,
/// could leave a refused batch behind accepted later ones, which the next run then sent again.
///
/// The state, the outcome and ``OTLPExport/commit`` are touched under one lock, so commits come one at
/// a time, each with the state as it stands after the batch it follows.
final class OTLPSendingLanes: @unchecked Sendable {
    private let ledger = NSLock()
    private var state: CumulativeExport
    private var outcome: OTLPExport.Outcome
    private var stopped = false
    private let queues: [OTLPBatchQueue<OTLPEncodedBatch>]
    private let deliver: (OTLPEndpoint.Signal, [UInt8]) -> OTLPSender.Outcome
    private let commit: (CumulativeExport) -> Void

    init(
        queues: [OTLPBatchQueue<OTLPEncodedBatch>], state: CumulativeExport, outcome: OTLPExport.Outcome,
        deliver: @escaping (OTLPEndpoint.Signal, [UInt8]) -> OTLPSender.Outcome, commit: @escaping (CumulativeExport) -> Void
    ) {
        self.queues = queues
        self.state = state
        self.outcome = outcome
        self.deliver = deliver
        self.commit = commit
    }

    /// Drains every queue, the first on the caller's thread and each other on a thread of its own;
    /// returns once all are drained (or stopped) with the state and outcome as the acceptances left them.
    func run() -> (CumulativeExport, OTLPExport.Outcome) {
        let others = DispatchGroup()
        for queue in queues.dropFirst() {
            others.enter()
            let thread = Thread { [self] in
                drain(queue)
                others.leave()
            }
            thread.name = "apitrace.otlp.send"
            thread.stackSize = 1 << 20
            thread.start()
        }
        if let first = queues.first { drain(first) }
        others.wait()
        return ledger.withLock { (state, outcome) }
    }

    private var isStopped: Bool { ledger.withLock { stopped } }

    /// Stops every lane before its next batch and the readers at their next hand-over.
    private func stop(_ reason: String) {
        ledger.withLock {
            if outcome.failure == nil { outcome.failure = reason }
            stopped = true
        }
        for queue in queues { queue.cancel() }
    }

    private func drain(_ queue: OTLPBatchQueue<OTLPEncodedBatch>) {
        while let batch = queue.pop() {
            guard !isStopped else { return }
            if let failure = batch.failure { return stop(failure) }
            for (signal, payload) in batch.payloads {
                switch deliver(signal, payload) {
                case .sent(_, let bytes):
                    ledger.withLock {
                        outcome.requests += 1
                        outcome.bytesOnWire += bytes
                    }
                case .failed(_, let reason), .rejected(_, let reason):
                    return stop(reason)
                }
            }
            ledger.withLock {
                outcome.spans += batch.spans
                outcome.logs += batch.logs
                if let metrics = batch.metrics { state.metrics.merge(metrics) }
                for end in batch.ends {
                    state.setCountedEvents(end.events, in: end.start.file)
                    state.finishFile(end.start, usable: end.usable)
                }
                if let mark = batch.mark { state.setCountedEvents(mark.events, in: mark.file) }
                if batch.spans + batch.logs > 0 || !batch.ends.isEmpty || batch.mark != nil { commit(state) }
            }
        }
    }
}
