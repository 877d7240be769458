import APITraceCapture
import APITraceFormat
#if canImport(FoundationNetworking)
import Foundation
public import FoundationNetworking
#else
public import Foundation  // URLSession's types are Foundation's on Apple platforms
#endif

/// Sends finished trace files to a collector, deleting each only after the collector has it.
///
/// Files are read from the top level of ``Configuration/directory`` (every `.jsonl.gz` except
/// the one ``Configuration/activeFile`` names), oldest first, one HTTP `POST` per file with the
/// bytes as they are on disk, `Authorization: Bearer`, `X-APITrace-Producer` and an RFC 9530
/// `Content-Digest: sha-256=:…:`. What the answer means:
///
/// | answer | what happens to the file |
/// | --- | --- |
/// | the collector's `201 stored` / `200 already stored`, naming the file's SHA-256 | deleted |
/// | any other 2xx (a captive portal, a proxy), a 3xx (never followed) | kept; retried after ``RetryPolicy`` |
/// | 429, 408, 500 and up (`RequestOutcome.isRetryable(status:)`), network error | kept; retried after ``RetryPolicy`` (at least `Retry-After`) |
/// | 401, 403 | kept; retried at once if the token provider gives a new token, else after the longest backoff |
/// | 400 "truncated" (an older collector) | the file is finished (its complete lines kept) and sent again |
/// | other 4xx | moved to ``Configuration/rejectedFolder`` with a `.reason` file, and logged |
///
/// Fresh by default: created with ``Configuration/init(writer:endpoint:token:)``, the uploader asks the
/// writer every ``Configuration/segmentInterval`` (60 s) to finish its current file if it holds
/// anything new, and sends that file at once, so what the app captured reaches the collector within
/// about a minute and a half; nothing is sent when nothing is new, and no segment is cut while
/// uploads fail (see ``Configuration/segmentInterval``).
///
/// A file a killed app left cut (writable, held by no writer) is finished before it is read, so
/// its complete lines are sent as a complete file; see `TraceFileWriter`.
/// The collector names files by their content, so a file sent twice (the app was killed
/// between the collector's answer and the delete) is stored once.
/// Everything runs on the uploader's own task, never on the caller's thread.
///
/// ```swift
/// let uploader = TraceUploader(configuration: .init(writer: writer, endpoint: url, token: token))
/// uploader.start()
/// uploader.pause()   // e.g. on an expensive network
/// uploader.resume()
/// ```
public final class TraceUploader: Sendable {
    /// The configuration the uploader was created with.
    public let configuration: Configuration

    private let session: URLSession
    private let wakeup = Wakeup()
    private let state = Locked(State())

    private struct State {
        var task: Task<Void, Never>?
        var paused = false
        var stats = Statistics()
        /// The token the collector last refused, handed to the provider so it can refresh.
        var refusedToken: String?
        /// Callers of ``finishAndSend()`` waiting for the pass that serves them.
        var sendWaiters: [CheckedContinuation<Void, Never>] = []
        /// True while the task sleeps out a backoff: ``finishAndSend()`` does not wait for it.
        var backingOff = false
        /// Sends the current segment when the app goes to the background (Apple platforms with UIKit).
        var background: (any Sendable)?
    }

    /// Creates an uploader; nothing is sent before ``start()``.
    public init(configuration: Configuration) {
        self.configuration = configuration
        var sessionConfiguration = configuration.sessionConfiguration()
        if sessionConfiguration.identifier != nil {
            configuration.diagnostics("background URLSession configurations cannot run the uploader's requests; using the default configuration")
            sessionConfiguration = Self.defaultSessionConfiguration()
        }
        session = URLSession(configuration: sessionConfiguration, delegate: RefuseRedirects(), delegateQueue: nil)
    }

    /// The session configuration used unless the app supplies one: ephemeral (no cookies, no cache),
    /// one connection to the collector, a 60 s request timeout, and on Apple platforms waiting for
    /// connectivity rather than failing at once.
    @Sendable
    public static func defaultSessionConfiguration() -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 60
        configuration.httpMaximumConnectionsPerHost = 1
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        #if canImport(Darwin)
        configuration.waitsForConnectivity = true
        #endif
        return configuration
    }

    deinit {
        state.withLock { $0.task }?.cancel()
        session.invalidateAndCancel()
    }

    /// Starts uploading in the background. Calling it again does nothing.
    public func start() {
        state.withLock { state in
            guard state.task == nil else { return }
            state.task = Task.detached { [self] in await run() }
            #if canImport(UIKit) && !os(watchOS)
            if configuration.finishActiveFile != nil { state.background = BackgroundSending(self) }
            #endif
        }
    }

    /// Finishes the writer's current file now (if it holds anything new) and sends every pending
    /// file, returning when that pass is over: all delivered, or an attempt failed and waits for its
    /// backoff (the files stay on disk for later). Returns at once when the uploader is not running,
    /// is paused or is backing off. On Apple platforms with UIKit the uploader calls it itself, inside
    /// a background task, when the app goes to the background.
    public func finishAndSend() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let queued: Bool = state.withLock { state in
                guard state.task != nil, !state.paused, !state.backingOff else { return false }
                state.sendWaiters.append(continuation)
                return true
            }
            if queued { wakeup.signal() } else { continuation.resume() }
        }
    }

    private func takeSendWaiters() -> [CheckedContinuation<Void, Never>] {
        state.withLock { state in
            defer { state.sendWaiters.removeAll() }
            return state.sendWaiters
        }
    }

    /// Stops uploading and waits until the background task has ended. A request in flight is
    /// cancelled; its file stays and is sent again by the next uploader (the collector stores it once).
    public func stop() async {
        let current = state.withLock { state in
            defer { state.task = nil }
            return state.task
        }
        current?.cancel()
        await current?.value
        state.withLock { $0.background = nil }
        for waiter in takeSendWaiters() { waiter.resume() }
    }

    /// Stops starting uploads (a request in flight finishes) until ``resume()``.
    public func pause() {
        state.withLock { $0.paused = true }
    }

    /// Uploads again after ``pause()``.
    public func resume() {
        state.withLock { $0.paused = false }
        wakeup.signal()
    }

    /// True between ``pause()`` and ``resume()``.
    public var isPaused: Bool { state.withLock { $0.paused } }

    /// Looks at the folder now rather than at the next scan (e.g. after the writer rotated a file).
    /// Does not cut short a backoff.
    public func uploadNow() {
        wakeup.signal()
    }

    /// What the uploader has done so far.
    public var statistics: Statistics { state.withLock { $0.stats } }

    func lockedUpdate(_ body: (inout Statistics) -> Void) {
        state.withLock { body(&$0.stats) }
    }

    /// Finished files waiting to be sent, oldest first.
    public func pendingFiles() -> [String] {
        pendingFiles(finished: [])
    }

    /// Finished files waiting to be sent; those in `finished`, handed over by the writer, need not
    /// wait ``Configuration/minimumFileAge``.
    private func pendingFiles(finished: Set<String>) -> [String] {
        let dir = configuration.directory
        let prefix = dir.hasSuffix("/") ? dir : dir + "/"
        let active = configuration.activeFile()
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else { return [] }
        let settled = Date().timeIntervalSince1970 - configuration.minimumFileAge.inSeconds
        return names
            .filter { !$0.hasPrefix(".") && $0.hasSuffix(".jsonl.gz") }
            .sorted()
            .map { prefix + $0 }
            .filter { path in
                path != active && !Self.isSamePath(path, active)
                    && (Self.modificationTime(path) <= settled || finished.contains(path))
            }
    }

    private static func modificationTime(_ path: String) -> Double {
        FileStatus(path: path)?.modifiedSeconds ?? .infinity
    }

    private static func isSamePath(_ a: String, _ b: String?) -> Bool {
        guard let b else { return false }
        return URL(fileURLWithPath: a).standardizedFileURL.path == URL(fileURLWithPath: b).standardizedFileURL.path
    }

    // MARK: - Background task

    private func run() async {
        var failures = 0
        let clock = ContinuousClock()
        var nextSegment = clock.now.advanced(by: configuration.segmentInterval)
        // Segments the writer handed over and not yet delivered: sent without the minimumFileAge wait,
        // and, while they fail, still pending (so a failing upload is never mistaken for an empty folder).
        var segments: Set<String> = []
        while !Task.isCancelled {
            if isPaused {
                for waiter in takeSendWaiters() { waiter.resume() }
                await wakeup.wait(timeout: .seconds(3600))
                continue
            }
            // Taken before the cut, so each waiter's events are in the segment it waits for.
            let waiters = takeSendWaiters()
            if let finish = configuration.finishActiveFile {
                // While uploads fail, no segment is cut: an offline device keeps the writer's own
                // hourly files (within its folder budgets), not one file per stale minute.
                if !waiters.isEmpty || (failures == 0 && clock.now >= nextSegment) {
                    if let segment = await Self.offThread(finish) { segments.insert(segment) }
                    nextSegment = clock.now.advanced(by: configuration.segmentInterval)
                } else if clock.now >= nextSegment {
                    nextSegment = clock.now.advanced(by: configuration.segmentInterval)
                }
            }
            let idle: Duration = configuration.finishActiveFile == nil
                ? configuration.scanInterval
                : max(.milliseconds(10), min(configuration.scanInterval, clock.now.duration(to: nextSegment)))
            segments = segments.filter { FileStatus(path: $0) != nil }
            let files = pendingFiles(finished: segments)
            if files.isEmpty {
                // Nothing left to send: nothing is failing.
                failures = 0
                for waiter in waiters { waiter.resume() }
                await wakeup.wait(timeout: idle)
                continue
            }
            var backoff: Duration?
            var progressed = false
            for path in files {
                if Task.isCancelled || isPaused { break }
                switch await send(path) {
                case .skipped:
                    continue
                case .done:
                    progressed = true
                    failures = 0
                case .retry(let retryAfter, let reason, let authentication):
                    failures += 1
                    let delay = authentication
                        ? configuration.retry.maximum
                        : configuration.retry.delay(afterFailures: failures, retryAfter: retryAfter)
                    state.withLock { $0.stats.retries += 1 }
                    configuration.onEvent(.willRetry(file: Self.name(path), delay: delay, reason: reason))
                    backoff = delay
                }
                if backoff != nil { break }
            }
            for waiter in waiters { waiter.resume() }
            if let backoff {
                // Only stop() cuts a backoff short: resume() and uploadNow() must not defeat Retry-After.
                state.withLock { $0.backingOff = true }
                for waiter in takeSendWaiters() { waiter.resume() }
                try? await Task.sleep(for: backoff)
                state.withLock { $0.backingOff = false }
            } else if !progressed {
                // Every pending file is held by a writer (being finished): look again later.
                await wakeup.wait(timeout: idle)
            }
        }
        for waiter in takeSendWaiters() { waiter.resume() }
    }

    /// Runs the writer's blocking finish (it waits for the writer's thread and its `fsync`) off the
    /// cooperative pool.
    private static func offThread(_ body: @escaping @Sendable () -> String?) async -> String? {
        await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
            Thread.detachNewThread { continuation.resume(returning: body()) }
        }
    }

    enum Attempt {
        case done
        /// Not sent now (held by a writer); no failure.
        case skipped
        case retry(retryAfter: Duration?, reason: String, authentication: Bool)
    }

    private func send(_ path: String) async -> Attempt {
        let name = Self.name(path)
        // A file a killed app left cut is finished first, under the writer's lock, so only its finished form is ever sent.
        switch TraceFileWriter.finishLeftover(path: path) {
        case .locked:
            return .skipped
        case .deleted:
            configuration.diagnostics("deleted \(name): left by a killed app before its header was complete")
            return .done
        case .salvaged(let salvage):
            configuration.diagnostics(
                "finished \(name), left cut by a killed app: kept \(salvage.keptLines) lines, dropped \(salvage.droppedBytes) bytes of an incomplete last line")
        case .failed(let reason):
            // A damaged file is sent as it is: the collector says what is wrong with it.
            configuration.diagnostics(reason)
        case .finished, .complete:
            break
        }
        let body: Data
        // Through the one opener: a FIFO or a link to a device named like a trace file is refused
        // at once instead of blocking the uploader (or reading without end).
        switch RegularFile.read(path, limit: Int(Int32.max)) {
        case .success(let bytes?):
            body = Data(bytes)
        case .success(nil):
            // Deleted meanwhile (the writer's budget): nothing to send now.
            return .done
        case .failure(let refusal):
            configuration.diagnostics("cannot read \(refusal) for upload")
            // Not a file to wait for: the files after it are sent.
            if refusal.isNotRegularFile { return .skipped }
            return .retry(retryAfter: nil, reason: "cannot read the file", authentication: false)
        }
        // The writer may have opened this file since the folder was listed.
        if let active = configuration.activeFile(), active == path || Self.isSamePath(path, active) { return .done }
        let token: String
        do {
            token = try await configuration.token.token(refused: state.withLock { $0.refusedToken })
        } catch {
            return .retry(retryAfter: nil, reason: "the token provider failed: \(error)", authentication: false)
        }
        let request = UploadRequest.make(
            endpoint: configuration.endpoint, token: token,
            producer: configuration.producer ?? TraceFileIdentity(fileName: name)?.producer, body: body,
            timeout: configuration.requestTimeout)
        let status: Int
        let responseText: String
        let retryAfter: Duration?
        let location: String?
        do {
            let response = try await URLSessionBackend(session: session).perform(request)
            status = response.status
            responseText = String(decoding: response.body.prefix(500), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            retryAfter = response.headers.first { $0.key.lowercased() == "retry-after" }.flatMap { RetryPolicy.parseRetryAfter($0.value) }
            location = response.headers.first { $0.key.lowercased() == "location" }?.value
        } catch {
            return .retry(retryAfter: nil, reason: "network: \(error.localizedDescription)", authentication: false)
        }
        if status == 401 || status == 403 {
            state.withLock { $0.refusedToken = token }
            configuration.diagnostics("the collector refused the token (HTTP \(status): \(responseText)); keeping the files and retrying")
            // A provider that has a new token gets it tried after the ordinary backoff, not the longest one.
            let fresh = try? await configuration.token.token(refused: token)
            let refreshed = fresh != nil && fresh != token
            return .retry(retryAfter: retryAfter, reason: "HTTP \(status): \(responseText)", authentication: !refreshed)
        }
        state.withLock { $0.refusedToken = nil }
        switch status {
        case 200..<300:
            let sha256Hex = UploadRequest.sha256Hex(body)
            guard CollectorReceipt(status: status, body: responseText, sha256Hex: sha256Hex) != nil else {
                return .retry(
                    retryAfter: nil,
                    reason: "HTTP \(status) is not the collector's receipt for this file (a captive portal or proxy?); keeping it: \(responseText.prefix(100))",
                    authentication: false)
            }
            if unlink(path) != 0 && errno != ENOENT {
                configuration.diagnostics("uploaded \(path) but cannot delete it: \(String(cString: strerror(errno)))")
            }
            state.withLock { $0.stats.delivered += 1; $0.stats.deliveredBytes += body.count }
            configuration.onEvent(.delivered(file: name, bytes: body.count, status: status))
            return .done
        case 300..<400:
            return .retry(retryAfter: nil, reason: "HTTP \(status): redirect\(location.map { " to \($0)" } ?? "") not followed; keeping the file", authentication: false)
        case _ where RequestOutcome.isRetryable(status: status):
            return .retry(retryAfter: retryAfter, reason: "HTTP \(status): \(responseText)", authentication: false)
        case 400 where responseText.contains("truncated"):
            // An older collector refuses cut files: finish it here (complete lines kept) and send that.
            chmod(path, 0o600)
            if case .salvaged = TraceFileWriter.finishLeftover(path: path) {
                return .retry(retryAfter: .zero, reason: "HTTP 400 truncated: finished the file, sending it again", authentication: false)
            }
            setAside(path, status: status, reason: responseText)
            return .done
        default:
            setAside(path, status: status, reason: responseText)
            return .done
        }
    }

    static func name(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }
}
