/// One decoded line of a trace file.
public enum TraceLine: Sendable, Equatable {
    /// The file header (`"type":"header"`).
    case header(TraceFileHeader)
    /// An event of a type this library knows.
    case event(TraceEvent)
    /// An event of a type this library does not know (written by a newer producer); skipped by readers.
    case unknown(type: String)

    /// A line that is valid JSON but not a valid trace line, naming the field at fault.
    public struct Invalid: Error, Sendable, Equatable, CustomStringConvertible {
        /// What was wrong, e.g. `field "status" is not a number` or `missing field "route"`.
        public var reason: String
        /// False when the line is not a JSON object at all (RFC 8259), true when it is one that breaks
        /// the trace format's rules (a missing field, a value of the wrong type or out of range).
        public var isJSONObject: Bool
        public var description: String { reason }

        public init(reason: String, isJSONObject: Bool = true) {
            self.reason = reason
            self.isJSONObject = isJSONObject
        }
    }

    /// Decodes one line (without its newline).
    ///
    /// The line is read by `TraceRecordScanner`, the one decoder every command and the collector
    /// use, so a line is valid here exactly when it is valid everywhere: JSON as RFC 8259 defines it
    /// (escapes in keys and values included), unknown fields skipped, and a known field with the
    /// wrong type, a value out of range or a missing required field throwing ``Invalid`` that names it.
    public static func decode(_ line: UnsafeRawBufferPointer) throws(Invalid) -> TraceLine {
        var scanner = TraceRecordScanner()
        return try decode(line, with: &scanner)
    }

    /// ``decode(_:)`` with a scanner a caller keeps across lines (it reuses its buffers).
    package static func decode(_ line: UnsafeRawBufferPointer, with scanner: inout TraceRecordScanner) throws(Invalid) -> TraceLine {
        switch scanner.scan(line) {
        case .invalid(let reason): throw Invalid(reason: reason, isJSONObject: TraceRecordScanner.isJSONObject(line))
        case .unknownType: return .unknown(type: scanner.record.type?.string ?? "")
        case .header: return .header(scanner.record.header)
        case .event: return .event(scanner.record.event)
        }
    }

    /// Decodes one line of text.
    public static func decode(_ line: String) throws(Invalid) -> TraceLine {
        var line = line
        let result = line.withUTF8 { bytes -> Result<TraceLine, Invalid> in
            do throws(Invalid) { return .success(try decode(UnsafeRawBufferPointer(bytes))) } catch { return .failure(error) }
        }
        return try result.get()
    }
}

