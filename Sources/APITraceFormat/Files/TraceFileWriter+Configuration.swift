import Foundation

extension TraceFileWriter {
    /// How a ``TraceFileWriter`` buffers, flushes, rotates and bounds its files.
    public struct Configuration: Sendable {
        /// Folder the trace files go to; created (mode 0700) when missing.
        public var directory: String
        /// Id of this producer, part of every file name and header. Default: 8 random hex digits.
        public var producer: String
        /// Application name for the header.
        public var app: String?
        /// Application version for the header.
        public var appVersion: String?
        /// Host or device name for the header. Default: none, since a device's name ("Anna's iPhone")
        /// is personal data that would travel to the collector; servers pass theirs explicitly.
        public var host: String?
        /// Events held in memory waiting for the writer; past it, events are dropped and counted. Default 10,000.
        public var bufferCapacity: Int
        /// How often buffered events are compressed, flushed with `Z_SYNC_FLUSH` and written. Default 1 s:
        /// a process killed with SIGKILL loses at most this much.
        public var flushInterval: Duration
        /// A file is finished and a new one started past this many compressed bytes. Default 4 MiB.
        public var maxFileBytes: Int
        /// A file is finished and a new one started when it is this old. Default 1 hour.
        public var maxFileAge: Duration
        /// Most bytes all trace files in the folder may take; oldest finished files are deleted past it. Default 64 MiB.
        public var directoryByteBudget: Int
        /// Most trace files the folder may hold; oldest finished files are deleted past it. Default 200.
        public var directoryFileBudget: Int
        /// zlib level, 1 (fastest) to 9 (smallest). Default 5; see `Docs/trace-format.md` for the measurements.
        public var compressionLevel: Int32
        /// Where the writer reports its own trouble (disk full, unwritable folder). Default: standard error.
        public var diagnostics: @Sendable (String) -> Void

        /// Creates a configuration with the defaults above.
        public init(
            directory: String,
            producer: String = Configuration.randomProducerID(),
            app: String? = nil,
            appVersion: String? = nil,
            host: String? = nil,
            bufferCapacity: Int = 10_000,
            flushInterval: Duration = .seconds(1),
            maxFileBytes: Int = 4 << 20,
            maxFileAge: Duration = .seconds(3600),
            directoryByteBudget: Int = 64 << 20,
            directoryFileBudget: Int = 200,
            compressionLevel: Int32 = 5,
            diagnostics: @escaping @Sendable (String) -> Void = Configuration.standardError
        ) {
            self.directory = directory
            self.producer = producer
            self.app = app
            self.appVersion = appVersion
            self.host = host
            self.bufferCapacity = bufferCapacity
            self.flushInterval = flushInterval
            self.maxFileBytes = maxFileBytes
            self.maxFileAge = maxFileAge
            self.directoryByteBudget = directoryByteBudget
            self.directoryFileBudget = directoryFileBudget
            self.compressionLevel = compressionLevel
            self.diagnostics = diagnostics
        }

        /// 8 random lowercase hex digits.
        public static func randomProducerID() -> String {
            let value = UInt32.random(in: 0...UInt32.max)
            let hex = String(value, radix: 16)
            return String(repeating: "0", count: 8 - hex.count) + hex
        }

        /// Writes a diagnostic line to standard error.
        public static let standardError: @Sendable (String) -> Void = { message in
            FileHandle.standardError.write(Data(("apitrace: " + message + "\n").utf8))
        }
    }

    /// Counters of what the writer did, for tests and dashboards.
    public struct Statistics: Sendable, Equatable {
        /// Events given to ``TraceFileWriter/append(_:)``.
        public var appended = 0
        /// Events written to files.
        public var written = 0
        /// Events dropped because the buffer was full.
        public var droppedBufferFull = 0
        /// Events dropped because they could not be written (disk full, unwritable folder).
        public var droppedWriteFailed = 0
        /// Finished files deleted to stay within the folder's budgets.
        public var filesDeleted = 0
        /// Events in the files deleted for the budgets.
        public var eventsDeleted = 0
        /// Files started.
        public var filesStarted = 0
        /// Files a killed run left cut, finished at start (their complete lines kept).
        public var filesFinishedAfterKill = 0
    }
}
