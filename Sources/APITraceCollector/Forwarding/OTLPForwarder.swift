import APITraceExport
import APITraceFormat
import Foundation
import Logging

/// Sends the uploads a collector stored to an OTLP endpoint, from its spool, on a thread of its own.
///
/// The request path only copies the upload into the ``OTLPSpool`` (a local write, like storing
/// it); everything that waits on the network happens here: ``OTLPExport`` maps and batches the
/// spooled file, ``OTLPSender`` posts each batch (its deadline, its tries with the format module's
/// `Backoff`, `Retry-After` on 429/502/503/504). After a round of tries fails, the forwarder waits
/// with the same `Backoff` (up to ``OTLPForwarding/maxRetryDelay``) and starts that upload again
/// where the receiver's last acceptance left it: progress is kept per spooled file, by position,
/// in `.otlp-spool/progress.json` (`CumulativeExport`, saved after each accepted batch), so a
/// restart does not send accepted batches again.
final class OTLPForwarder: Sendable {
    let configuration: OTLPForwarding
    let spool: OTLPSpool
    let metrics: OTLPForwardingMetrics
    private let progressPath: String
    private let logger: Logger
    private let started = Locked(false)

    static let progressSelection = "otlp collector forwarding"

    init(configuration: OTLPForwarding, collectorDirectory: String) throws(CollectorSetupError) {
        self.configuration = configuration
        let metrics = OTLPForwardingMetrics()
        let spool = try OTLPSpool(
            collectorDirectory: collectorDirectory, maxBytes: configuration.maxSpoolBytes, maxFiles: configuration.maxSpoolFiles, metrics: metrics)
        metrics.attach { spool.usage }
        self.metrics = metrics
        self.spool = spool
        progressPath = spool.directory + "/progress.json"
        var logger = Logger(label: "apitrace.collector.otlp")
        logger.logLevel = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0) } ?? .info
        self.logger = logger
    }

    /// Starts the forwarding thread (once).
    func start() {
        guard started.withLock({ was in defer { was = true }; return !was }) else { return }
        let thread = Thread { [self] in run() }
        thread.name = "apitrace.collector.otlp"
        thread.start()
    }

    /// Ends the thread after the request in progress (bounded by ``OTLPForwarding/timeout``).
    func stop() { spool.stop() }

    /// Spools a stored upload to be forwarded. Never blocks on the network, never fails the upload.
    func enqueue(_ body: UnsafeRawBufferPointer) { spool.add(body) }

    private func run() {
        var state: CumulativeExport
        do {
            state = try CumulativeExport.load(path: progressPath, selection: Self.progressSelection)
        } catch {
            // Lost progress sends the spooled uploads whole again; never worse than that.
            logger.warning("OTLP forwarding progress unreadable, starting over", metadata: ["error": "\(error)"])
            state = CumulativeExport(selection: Self.progressSelection)
        }
        state.forgetFiles(notIn: Set(spool.paths))
        var sender = OTLPSender(endpoint: configuration.endpoint)
        sender.maxAttempts = max(1, configuration.attemptsPerRound)
        sender.backoff = configuration.retryDelay
        // Retry-After is honoured as asked (up to 5 minutes): this thread waits on nothing else.
        sender.maxRetryAfter = max(configuration.maxRetryDelay, .seconds(300))
        sender.timeout = configuration.timeout
        let backoff = Backoff(initial: configuration.retryDelay * 2, maximum: configuration.maxRetryDelay)
        var failedRounds = 0

        while let entry = spool.nextToSend() {
            var last: OTLPSender.Outcome?
            var export = OTLPExport(encoding: configuration.endpoint.encoding, batchSize: configuration.batchSize, commit: { [progressPath, logger] current in
                do { try current.save(path: progressPath) } catch {
                    logger.warning("cannot save the OTLP forwarding progress", metadata: ["error": "\(error)"])
                }
            }) { [spool, metrics, sender] signal, payload in
                // A dropped upload (the spool's bound) or a stopping collector ends the upload's sending here.
                guard spool.stillHolds(entry) else { return .failed(attempts: 0, reason: "no longer spooled") }
                let outcome = sender.send(payload, signal: signal)
                switch outcome {
                case .sent(let attempts, _):
                    metrics.recordRequest()
                    metrics.recordRetry(attempts - 1)
                case .failed(let attempts, _), .rejected(let attempts, _):
                    metrics.recordRetry(attempts - 1)
                }
                last = outcome
                return outcome
            }
            export.sendsMetrics = false
            // The round's first request resends what a failed round could not.
            if failedRounds > 0 { metrics.recordRetry() }
            let outcome = export.run(TraceExportReader(), [entry.path], state: &state)
            metrics.recordAccepted(spans: outcome.spans, logs: outcome.logs)
            // Dropped while being sent (the spool's bound), or stopping.
            guard spool.stillHolds(entry) else { continue }
            if outcome.failure == nil {
                spool.remove(entry)
                metrics.recordForwarded()
                forget(entry, in: &state)
                failedRounds = 0
                continue
            }
            if case .rejected(_, let reason)? = last, !Self.mayChange(reason) {
                // The receiver will never take it (malformed for it, too large): keeping it would block the rest.
                logger.error("OTLP endpoint refused an upload; dropped", metadata: ["reason": "\(reason)"])
                spool.remove(entry)
                metrics.recordDropped(.rejected, bytes: entry.bytes)
                forget(entry, in: &state)
                failedRounds = 0
                continue
            }
            if failedRounds == 0 {
                logger.warning("OTLP forwarding paused; uploads stay spooled", metadata: ["reason": "\(outcome.failure ?? "")"])
            }
            let wait = backoff.delayMilliseconds(retry: failedRounds)
            failedRounds += 1
            guard spool.pause(milliseconds: wait) else { break }
        }
    }

    private func forget(_ entry: OTLPSpool.Entry, in state: inout CumulativeExport) {
        state.forgetFiles(notIn: Set(spool.paths))
        do { try state.save(path: progressPath) } catch {
            logger.warning("cannot save the OTLP forwarding progress", metadata: ["error": "\(error)"])
        }
    }

    /// A refusal that a change at the receiver or its configuration can lift (authentication, a
    /// path not routed yet, a timeout): kept and tried again, so a fixed header and a restart send
    /// the spool. Anything else (400, 413...) is final for that upload.
    static func mayChange(_ reason: String) -> Bool {
        ["HTTP 401 ", "HTTP 403 ", "HTTP 404 ", "HTTP 408 "].contains { reason.hasPrefix($0) }
    }
}
