import APITraceFormat
import Crypto
import Foundation
import NIOCore

/// Receives finished trace files from uploaders, checks them and stores them under `dt=YYYY-MM-DD/`.
///
/// The checks and the storage do not depend on HTTP: ``receive(authorization:contentDigest:body:)``
/// is the whole decision, and ``addRoutes(to:path:)`` puts it behind Hummingbird.
///
/// ```swift
/// let collector = try TraceCollector(configuration: .init(directory: "traces", tokens: [token]))
/// try await collector.run(host: "127.0.0.1", port: 9090) { port in print("listening on \(port)") }
/// ```
public final class TraceCollector: Sendable {
    /// The configuration the collector was created with.
    public let configuration: Configuration
    /// Counters of what the collector did, served at `GET /metrics`.
    public let metrics: CollectorMetrics

    let tokenCheck: BearerTokenCheck
    let store: TraceStore
    let validator: UploadValidator
    let admission: UploadAdmission
    /// Sends what is stored on to an OTLP endpoint, when ``Configuration/otlpForwarding`` is set.
    let forwarder: OTLPForwarder?
    // Inflating, hashing and fsync block: keep them off the server's event loops, on a bounded number of threads.
    private let work: OperationQueue
    /// Set when the server begins to shut down: uploads not yet being stored are answered 503, so
    /// the process ends after the few being stored instead of after the whole queue.
    private let draining = Locked(false)

    /// Creates the collector: checks the tokens, creates the folder and removes temporary files a crash left.
    public init(configuration: Configuration) throws(CollectorSetupError) {
        self.configuration = configuration
        guard configuration.maxConcurrentUploads > 0, configuration.maxBytesInFlight >= configuration.maxBodyBytes,
              configuration.storeThreads > 0, configuration.maxDecompressionRatio > 0, configuration.minBodyBytesPerSecond >= 0 else {
            throw CollectorSetupError(
                "the limits do not fit: give at least one concurrent upload and store thread, a positive decompression ratio, a minimum body rate of 0 or more, and a bytes-in-flight bound no smaller than the largest body (\(configuration.maxBodyBytes) bytes)")
        }
        tokenCheck = try BearerTokenCheck(tokens: configuration.tokens)
        let store = try TraceStore(directory: configuration.directory)
        self.store = store
        let validator = UploadValidator(maxDecompressedBytes: configuration.maxDecompressedBytes, maxRatio: configuration.maxDecompressionRatio)
        self.validator = validator
        // A newcomer may take the slot of an upload reading at under 8 times the minimum rate: slow enough to
        // be a dribbler or a very poor link, which retries after Retry-After like any busy answer.
        let admission = UploadAdmission(
            maxUploads: configuration.maxConcurrentUploads, maxBytes: configuration.maxBytesInFlight,
            preemptBelowBytesPerSecond: configuration.minBodyBytesPerSecond.multipliedReportingOverflow(by: 8).partialValue)
        self.admission = admission
        var ingest: IngestMetrics?
        if configuration.ingestMetrics {
            var log: IngestCountLog?
            if let id = configuration.instanceID { log = try IngestCountLog(store: store.directory, instance: id) }
            let counts = IngestMetrics(limits: configuration.metricLimits, log: log)
            if let log { try Self.recover(log, into: counts, store: store, validator: validator) }
            ingest = counts
        }
        var forwarder: OTLPForwarder?
        if let forwarding = configuration.otlpForwarding {
            forwarder = try OTLPForwarder(configuration: forwarding, collectorDirectory: store.directory)
        }
        self.forwarder = forwarder
        metrics = CollectorMetrics(
            inFlight: { admission.usage }, ingest: ingest,
            forwarding: forwarder?.metrics)
        work = OperationQueue()
        work.name = "apitrace.collector.store"
        work.maxConcurrentOperationCount = configuration.storeThreads
        forwarder?.start()
    }

    deinit { forwarder?.stop() }

    /// What an upload came to.
    public struct Reply: Sendable, Equatable {
        /// HTTP status: 201 stored, 200 already stored, or the rejection's status.
        public var status: Int
        /// A line for the client.
        public var message: String
        /// The rejection, when there was one.
        public var rejection: UploadRejection.Reason?
        /// For a body cut short (a killed app's file): decompressed bytes of its incomplete last line, dropped.
        public var droppedBytes: Int?
    }

    /// Checks the token only: called before reading a body, so strangers cannot make the collector read one.
    func authorize(_ authorization: String?) -> UploadRejection? {
        switch tokenCheck.check(authorization: authorization) {
        case .accepted: return nil
        case .missing: return UploadRejection(.missingToken, "missing token: send Authorization: Bearer <token>")
        case .invalid: return UploadRejection(.invalidToken, "invalid token")
        }
    }

    /// Decides on one upload: token, body, header, digest, then stores it. Blocking; thread-safe.
    public func receive(authorization: String?, contentDigest: String?, body: UnsafeRawBufferPointer) -> Reply {
        receive(authorization: authorization, contentDigest: contentDigest, body: body, reserve: { _ in true })
    }

    /// `reserve(bytes)` asks for memory beyond the body (finishing a cut body needs a second copy); false answers 503.
    func receive(authorization: String?, contentDigest: String?, body: UnsafeRawBufferPointer, reserve: (Int) -> Bool) -> Reply {
        if let rejection = authorize(authorization) { return reply(rejection) }
        metrics.recordReceived(bytes: body.count)
        guard body.count <= configuration.maxBodyBytes else {
            return reply(UploadRejection(.bodyTooLarge, "the body is \(body.count) bytes, more than the collector's limit of \(configuration.maxBodyBytes)"))
        }
        do throws(UploadRejection) {
            let validated = try validator.validate(body, counting: metrics.ingest?.tally())
            let digest = SHA256.hash(data: body)
            if let contentDigest, let claimed = Self.sha256(fromContentDigest: contentDigest),
               claimed != Array(digest) {
                throw UploadRejection(.digestMismatch, "the body does not match its Content-Digest: damaged in transit; send it again")
            }
            let hex = digest.map { String(format: "%02x", $0) }.joined()
            // With a counter log: the segment is logged under its journal's lock before it is recorded, then confirmed as it is counted.
            let log = validated.tally == nil ? nil : metrics.ingest?.log
            var seq: Int?
            let counting = log.map { log in
                SegmentCounting(instance: log.instance) { journal, digest, start, size, file throws(UploadRejection) in
                    seq = try log.intend(journal: journal, digest: digest, start: start, size: size, file: file)
                }
            }
            func storing(_ bytes: UnsafeRawBufferPointer) throws(UploadRejection) -> TraceStore.Outcome {
                do {
                    let outcome = try store.store(bytes, header: validated.header, sha256Hex: hex, counting: counting)
                    if case .alreadyStored = outcome, let pending = seq { log?.abort(pending); seq = nil }
                    return outcome
                } catch {
                    if let pending = seq { log?.abort(pending); seq = nil }
                    throw error
                }
            }
            // Known by the digest of the bytes received, so sending the same cut body again is "already stored".
            guard let cutAt = validated.cutAt else {
                return try stored(storing(body), bytes: body.count, body: body, counted: validated.tally, seq: seq)
            }
            if store.contains(header: validated.header, sha256Hex: hex) {
                return stored(.alreadyStored(TraceStore.relativePath(header: validated.header, sha256Hex: hex)), bytes: 0, body: UnsafeRawBufferPointer(start: nil, count: 0), counted: nil)
            }
            // The recompressed lines are about as large as the body they come from.
            guard reserve(body.count) else { return busyReply(.bytes) }
            let salvage: TraceFileWriter.Salvage
            do {
                salvage = try TraceFileWriter.salvage(body)
            } catch {
                throw UploadRejection(.notGzip, "the gzip data is corrupt: \(error.gzip)")
            }
            let finished = salvage.finished ?? []
            let outcome = finished.withUnsafeBytes { bytes in
                Result { () throws(UploadRejection) in try storing(bytes) }
            }
            let storedOutcome = try outcome.get()
            var reply = finished.withUnsafeBytes { bytes in stored(storedOutcome, bytes: finished.count, body: bytes, counted: validated.tally, seq: seq) }
            if reply.status == 201 {
                metrics.recordSalvaged(droppedBytes: salvage.droppedBytes)
                reply.message += " (the body was cut at byte \(cutAt) of \(body.count): kept \(salvage.keptLines) complete lines, dropped \(salvage.droppedBytes) bytes of an incomplete last line)"
            }
            reply.droppedBytes = salvage.droppedBytes
            return reply
        } catch {
            return reply(error)
        }
    }

    /// `counted`: the upload's lines, counted by the check; added to the metrics only when stored.
    private func stored(_ outcome: TraceStore.Outcome, bytes: Int, body: UnsafeRawBufferPointer, counted: IngestTally?, seq: Int? = nil) -> Reply {
        switch outcome {
        case .stored(let path):
            forwarder?.enqueue(body)
            // Counted here and only here: of two uploads of one content, only one gets `.stored`.
            if let counted { metrics.ingest?.add(counted, confirming: seq) }
            metrics.recordAccepted(bytes: bytes)
            return Reply(status: 201, message: "stored \(path)")
        case .alreadyStored(let path):
            metrics.recordDuplicate()
            return Reply(status: 200, message: "already stored \(path)")
        }
    }

    /// ``receive(authorization:contentDigest:body:)`` on one of the store threads.
    func receiveInBackground(authorization: String?, contentDigest: String?, body: ByteBuffer, ticket: UploadAdmission.Ticket) async -> Reply {
        await withCheckedContinuation { continuation in
            work.addOperation {
                if self.draining.withLock({ $0 }) {
                    continuation.resume(returning: self.busyReply(.shuttingDown))
                    return
                }
                let reply = body.withUnsafeReadableBytes { bytes in
                    self.receive(authorization: authorization, contentDigest: contentDigest, body: bytes) { extra in
                        ticket.grow(to: bytes.count + extra)
                    }
                }
                continuation.resume(returning: reply)
            }
        }
    }

    /// The server began to shut down: uploads waiting for a store thread are answered 503 from now on.
    func beginDraining() {
        draining.withLock { $0 = true }
    }

    /// `503`: the collector is full; the uploader comes back after `Retry-After`.
    func busyReply(_ bound: CollectorMetrics.BusyReason) -> Reply {
        metrics.recordBusy(bound)
        let why = switch bound {
        case .uploads: "the collector is busy (too many uploads in progress)"
        case .bytes: "the collector is busy (too many bytes in progress)"
        case .shuttingDown: "the collector is shutting down"
        case .preempted: "the upload was too slow while others waited (under \(configuration.minBodyBytesPerSecond * 8) bytes/s): its slot went to another"
        }
        return Reply(status: 503, message: "\(why); retry after \(configuration.busyRetryAfterSeconds) s")
    }

    func reply(_ rejection: UploadRejection) -> Reply {
        metrics.recordRejected(rejection.reason)
        return Reply(status: rejection.reason.status, message: rejection.message, rejection: rejection.reason)
    }

    /// The SHA-256 in an RFC 9530 `Content-Digest` value (`sha-256=:<base64>:`), if it has one.
    static func sha256(fromContentDigest value: String) -> [UInt8]? {
        for member in value.split(separator: ",") {
            let trimmed = member.trimmingCharacters(in: .whitespaces)
            guard trimmed.lowercased().hasPrefix("sha-256=:"), trimmed.hasSuffix(":") else { continue }
            let base64 = trimmed.dropFirst(9).dropLast()
            return Data(base64Encoded: String(base64)).map(Array.init)
        }
        return nil
    }
}
