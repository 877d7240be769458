public import APITraceFormat
public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

extension TraceUploader {
    /// Where a ``TraceUploader`` finds finished files, where it sends them, and how it retries.
    public struct Configuration: Sendable {
        /// Folder of trace files (the writer's folder). Only its top level is looked at.
        public var directory: String
        /// The collector's upload URL, e.g. `https://collector.example.com/v1/traces`.
        public var endpoint: URL
        /// Where the bearer token sent in `Authorization` comes from (asked before every upload). Never logged.
        public var token: UploadTokenProvider
        /// Producer id sent in `X-APITrace-Producer`; default: the one in each file's name.
        public var producer: String?
        /// Path of the file still being written, never uploaded; see ``init(writer:endpoint:token:)``.
        public var activeFile: @Sendable () -> String?
        /// Finishes the writer's current file and returns its path (`nil` when it holds nothing new);
        /// set by ``init(writer:endpoint:token:)`` to `TraceFileWriter.finishCurrentFile()`. `nil`: the
        /// uploader only sends the files the writer finishes on its own (1 h or 4 MiB by default).
        public var finishActiveFile: (@Sendable () -> String?)?
        /// How often the uploader asks ``finishActiveFile`` for a segment to send. Default 60 s, so
        /// what an app captured reaches the collector within about a minute and a half.
        ///
        /// A segment is cut only when the writer holds events written since the last one (nothing is
        /// sent when nothing is new) and the uploader is caught up: while uploads fail (offline, the
        /// collector down) no segments are cut, so an offline device keeps the writer's own hourly
        /// files within the folder's budgets instead of one file a minute, and sends them in order
        /// when it is back.
        public var segmentInterval: Duration = .seconds(60)
        /// Files modified more recently than this are left for later. Default 2 s: covers the instant
        /// between the writer creating a file and reporting it as ``activeFile``.
        public var minimumFileAge: Duration
        /// How often the folder is looked at when there is nothing to do. Default 30 s; ``TraceUploader/uploadNow()`` looks at once.
        public var scanInterval: Duration
        /// Delays between retries after 429, 5xx and network errors.
        public var retry: RetryPolicy
        /// Time allowed for one request. Default 60 s.
        public var requestTimeout: Duration
        /// Makes the `URLSessionConfiguration` uploads go through; called once, by ``TraceUploader/init(configuration:)``.
        ///
        /// Default ``TraceUploader/defaultSessionConfiguration()``: ephemeral (no cookies, no cache), one
        /// connection, and on Apple platforms waiting for connectivity instead of failing at once.
        /// An app can ask for more, for example no uploads on expensive or constrained networks:
        ///
        /// ```swift
        /// configuration.sessionConfiguration = {
        ///     let session = TraceUploader.defaultSessionConfiguration()
        ///     session.allowsExpensiveNetworkAccess = false    // Apple platforms
        ///     session.allowsConstrainedNetworkAccess = false  // Low Data Mode
        ///     return session
        /// }
        /// ```
        ///
        /// Redirects are never followed, whatever the configuration. Background session
        /// configurations (`.background(withIdentifier:)`) are refused: they do not run
        /// completion-handler tasks, and the uploader falls back to the default with a diagnostic.
        public var sessionConfiguration: @Sendable () -> URLSessionConfiguration
        /// Subfolder the files a collector refused (4xx other than 401, 403, 408, 429, and a cut file it
        /// could not salvage) are moved to, with a `.reason` file.
        public var rejectedFolder: String
        /// Most refused files kept in ``rejectedFolder``; the oldest are deleted past it. Default 20.
        public var rejectedFileBudget: Int
        /// Most bytes of refused files kept in ``rejectedFolder``. Default 16 MiB.
        public var rejectedByteBudget: Int
        /// Where the uploader reports refused files and trouble. Default: standard error.
        public var diagnostics: @Sendable (String) -> Void
        /// Called on the uploader's task after each attempt; for an app's own metrics.
        public var onEvent: @Sendable (TraceUploader.Event) -> Void

        /// Creates a configuration with the defaults above.
        public init(
            directory: String,
            endpoint: URL,
            token: String,
            producer: String? = nil,
            activeFile: @escaping @Sendable () -> String? = { nil },
            minimumFileAge: Duration = .seconds(2),
            scanInterval: Duration = .seconds(30),
            retry: RetryPolicy = RetryPolicy(),
            requestTimeout: Duration = .seconds(60),
            rejectedFolder: String = "rejected",
            rejectedFileBudget: Int = 20,
            rejectedByteBudget: Int = 16 << 20,
            diagnostics: @escaping @Sendable (String) -> Void = TraceFileWriter.Configuration.standardError,
            onEvent: @escaping @Sendable (TraceUploader.Event) -> Void = { _ in }
        ) {
            self.init(
                directory: directory, endpoint: endpoint, tokenProvider: .constant(token), producer: producer,
                activeFile: activeFile, minimumFileAge: minimumFileAge, scanInterval: scanInterval, retry: retry,
                requestTimeout: requestTimeout, rejectedFolder: rejectedFolder, rejectedFileBudget: rejectedFileBudget,
                rejectedByteBudget: rejectedByteBudget, diagnostics: diagnostics, onEvent: onEvent)
        }

        /// Creates a configuration whose token comes from the app's provider, which can refresh it.
        public init(
            directory: String,
            endpoint: URL,
            tokenProvider: UploadTokenProvider,
            producer: String? = nil,
            activeFile: @escaping @Sendable () -> String? = { nil },
            minimumFileAge: Duration = .seconds(2),
            scanInterval: Duration = .seconds(30),
            retry: RetryPolicy = RetryPolicy(),
            requestTimeout: Duration = .seconds(60),
            sessionConfiguration: @escaping @Sendable () -> URLSessionConfiguration = TraceUploader.defaultSessionConfiguration,
            rejectedFolder: String = "rejected",
            rejectedFileBudget: Int = 20,
            rejectedByteBudget: Int = 16 << 20,
            diagnostics: @escaping @Sendable (String) -> Void = TraceFileWriter.Configuration.standardError,
            onEvent: @escaping @Sendable (TraceUploader.Event) -> Void = { _ in }
        ) {
            self.directory = directory
            self.endpoint = endpoint
            self.token = tokenProvider
            self.sessionConfiguration = sessionConfiguration
            self.producer = producer
            self.activeFile = activeFile
            self.minimumFileAge = minimumFileAge
            self.scanInterval = scanInterval
            self.retry = retry
            self.requestTimeout = requestTimeout
            self.rejectedFolder = rejectedFolder
            self.rejectedFileBudget = rejectedFileBudget
            self.rejectedByteBudget = rejectedByteBudget
            self.diagnostics = diagnostics
            self.onEvent = onEvent
        }

        /// Uploads the files of `writer`'s folder, skipping the one it is writing, and asks the writer
        /// for a segment every ``segmentInterval`` (see ``finishActiveFile``).
        ///
        /// ```swift
        /// let writer = TraceFileWriter(configuration: .init(directory: dir))
        /// let uploader = TraceUploader(configuration: .init(writer: writer, endpoint: url, token: token))
        /// uploader.start()
        /// ```
        public init(writer: TraceFileWriter, endpoint: URL, token: String) {
            self.init(
                directory: writer.configuration.directory, endpoint: endpoint, token: token,
                producer: writer.configuration.producer, activeFile: { writer.activeFilePath },
                diagnostics: writer.configuration.diagnostics)
            finishActiveFile = { writer.finishCurrentFile() }
        }

        /// Uploads the files of `writer`'s folder with a token from the app's provider.
        public init(writer: TraceFileWriter, endpoint: URL, tokenProvider: UploadTokenProvider) {
            self.init(
                directory: writer.configuration.directory, endpoint: endpoint, tokenProvider: tokenProvider,
                producer: writer.configuration.producer, activeFile: { writer.activeFilePath },
                diagnostics: writer.configuration.diagnostics)
            finishActiveFile = { writer.finishCurrentFile() }
        }
    }

    /// What happened to one file.
    public enum Event: Sendable, Equatable {
        /// The collector confirmed it stored the file (its own `201 stored` or `200 already stored`
        /// naming the file's SHA-256); the file was deleted.
        case delivered(file: String, bytes: Int, status: Int)
        /// The collector refused the file (4xx); it was moved to the rejected folder.
        case rejected(file: String, status: Int, reason: String)
        /// The attempt failed (429, 5xx, 401/403, network, a redirect, an answer that is not the
        /// collector's); the file is kept and the next attempt comes after `delay`.
        case willRetry(file: String, delay: Duration, reason: String)
    }

    /// Counters of what the uploader did.
    public struct Statistics: Sendable, Equatable {
        /// Files the collector confirmed, deleted.
        public var delivered = 0
        /// Bytes of the delivered files.
        public var deliveredBytes = 0
        /// Files moved aside after a 4xx.
        public var rejected = 0
        /// Failed attempts that will be retried.
        public var retries = 0

        /// Creates counters.
        public init(delivered: Int = 0, deliveredBytes: Int = 0, rejected: Int = 0, retries: Int = 0) {
            self.delivered = delivered
            self.deliveredBytes = deliveredBytes
            self.rejected = rejected
            self.retries = retries
        }
    }
}
