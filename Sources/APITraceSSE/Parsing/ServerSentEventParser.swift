#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An incremental parser for `text/event-stream` bodies, following the WHATWG HTML
/// "server-sent events" interpretation rules.
///
/// Feed it the body in chunks of any size, split anywhere (inside a line, between a CR and its LF,
/// inside the byte order mark). It keeps the last event id across events and across reconnects,
/// and reports the server's `retry` in ``reconnectionTime``.
///
/// ```swift
/// var parser = ServerSentEventParser()
/// parser.push(Array("id: 1\ndata: hello\n\n".utf8)) { event in print(event.data) }  // hello
/// parser.finishStream()  // the connection ended: a partial event is discarded
/// ```
///
/// Rules applied: one leading U+FEFF is skipped (a second one is part of the first line); lines end
/// in CRLF, LF or CR; a line starting with `:` is a comment; the field name runs to the first colon
/// and one space after the colon is dropped; `data` appends its value and a LF; `event` sets the type;
/// `id` sets the last event id unless the value holds NUL; `retry` sets the reconnection time when it
/// is all ASCII digits; other fields are ignored. An empty line dispatches: the last event id is
/// committed, and when the data buffer is not empty an event is produced with its trailing LF removed
/// and the type `message` when none was given.
///
/// Memory is bounded by ``Limits``: a line or an event past its limit stops the stream with
/// ``limitExceeded`` set (events completed before it are delivered), and the parser holds no more
/// than the limits allow.
public struct ServerSentEventParser: Sendable {
    /// The last event id committed by a dispatch: what a reconnect sends as `Last-Event-ID`.
    public private(set) var lastEventID: String
    /// The reconnection time in milliseconds from the latest valid `retry` field; `nil` until the server sends one.
    public private(set) var reconnectionTime: Int?
    /// The bounds on one line and one event.
    public let limits: Limits
    /// Set when the current stream broke a limit; the rest of the stream is ignored until ``finishStream()``.
    public private(set) var limitExceeded: LimitExceeded?

    private var lineBuffer: [UInt8] = []
    private var dataBuffer: [UInt8] = []
    private var eventTypeBuffer: [UInt8] = []
    private var idBuffer: [UInt8]
    private var idChanged = false
    private var pendingCR = false
    private var bomBytesMatched = 0
    private var bomResolved = false

    private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]
    private static let lineFeed: UInt8 = 0x0A
    private static let carriageReturn: UInt8 = 0x0D
    private static let colon: UInt8 = 0x3A
    private static let space: UInt8 = 0x20

    /// Creates a parser; `lastEventID` continues a stream read earlier (it is kept until the server sends an `id`).
    public init(lastEventID: String = "", limits: Limits = Limits()) {
        self.lastEventID = lastEventID
        self.limits = limits
        self.idBuffer = Array(lastEventID.utf8)
        lineBuffer.reserveCapacity(256)
        dataBuffer.reserveCapacity(256)
    }

    /// Parses the next chunk of the body, calling `onEvent` for every event it completes, in order.
    public mutating func push(_ chunk: UnsafeRawBufferPointer, onEvent: (ServerSentEvent) throws -> Void) rethrows {
        let count = chunk.count
        guard limitExceeded == nil, count > 0, let base = chunk.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        var index = 0
        if !bomResolved {
            while index < count, !bomResolved {
                if base[index] == Self.byteOrderMark[bomBytesMatched] {
                    bomBytesMatched += 1
                    index += 1
                    if bomBytesMatched == 3 { bomResolved = true }
                } else {
                    // Not a BOM after all: the bytes held back belong to the first line.
                    lineBuffer.append(contentsOf: Self.byteOrderMark[0..<bomBytesMatched])
                    bomResolved = true
                }
            }
            if index == count { return }
        }
        if pendingCR {
            pendingCR = false
            if base[index] == Self.lineFeed { index += 1 }
        }
        var lineStart = index
        // memchr finds line ends at SIMD speed; CR is rare, so its next position is cached per chunk.
        var nextCR = Self.find(Self.carriageReturn, base, from: index, to: count)
        while index < count {
            if nextCR < index { nextCR = Self.find(Self.carriageReturn, base, from: index, to: count) }
            let nextLF = Self.find(Self.lineFeed, base, from: index, to: nextCR)
            let lineEnd = min(nextLF, nextCR)
            if lineEnd == count { break }
            if lineBuffer.count + (lineEnd - lineStart) > limits.maximumLineBytes {
                exceed(.lineTooLong)
                return
            }
            let byte = base[lineEnd]
            let event: ServerSentEvent?
            if lineBuffer.isEmpty {
                event = processLine(UnsafeBufferPointer(start: base + lineStart, count: lineEnd - lineStart))
            } else {
                var line: [UInt8] = []
                swap(&line, &lineBuffer)
                line.append(contentsOf: UnsafeBufferPointer(start: base + lineStart, count: lineEnd - lineStart))
                event = line.withUnsafeBufferPointer { processLine($0) }
                line.removeAll(keepingCapacity: true)
                swap(&line, &lineBuffer)
            }
            index = lineEnd + 1
            if byte == Self.carriageReturn {
                if index < count {
                    if base[index] == Self.lineFeed { index += 1 }
                } else {
                    pendingCR = true
                }
            }
            lineStart = index
            if limitExceeded != nil { return }
            if let event { try onEvent(event) }
        }
        if lineStart < count {
            if lineBuffer.count + (count - lineStart) > limits.maximumLineBytes {
                exceed(.lineTooLong)
                return
            }
            lineBuffer.append(contentsOf: UnsafeBufferPointer(start: base + lineStart, count: count - lineStart))
        }
    }

    /// Parses the next chunk of the body and returns the events it completes.
    public mutating func push(_ chunk: [UInt8]) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        chunk.withUnsafeBytes { push($0) { events.append($0) } }
        return events
    }

    /// Parses the next chunk of the body, calling `onEvent` for every event it completes.
    public mutating func push(_ chunk: [UInt8], onEvent: (ServerSentEvent) throws -> Void) rethrows {
        try chunk.withUnsafeBytes { try push($0, onEvent: onEvent) }
    }

    /// Ends the current stream (the connection closed): an unfinished line and an undispatched event
    /// are discarded. The last event id and reconnection time are kept for the next stream, which may
    /// start with its own byte order mark.
    public mutating func finishStream() {
        // A stream that broke a limit may have grown the buffers to it: give that memory back.
        let shrink = limitExceeded != nil
        lineBuffer.removeAll(keepingCapacity: !shrink)
        dataBuffer.removeAll(keepingCapacity: !shrink)
        eventTypeBuffer.removeAll(keepingCapacity: !shrink)
        limitExceeded = nil
        idBuffer = Array(lastEventID.utf8)
        idChanged = false
        pendingCR = false
        bomBytesMatched = 0
        bomResolved = false
    }

    /// Position of the first `byte` in `from..<to`, or `to` when there is none.
    @inline(__always)
    private static func find(_ byte: UInt8, _ base: UnsafePointer<UInt8>, from: Int, to: Int) -> Int {
        guard from < to, let found = memchr(base + from, Int32(byte), to - from) else { return to }
        return UnsafeRawPointer(found) - UnsafeRawPointer(base)
    }

    private mutating func processLine(_ line: UnsafeBufferPointer<UInt8>) -> ServerSentEvent? {
        let count = line.count
        if count == 0 { return dispatch() }
        if line[0] == Self.colon { return nil }
        var colonIndex = 0
        while colonIndex < count, line[colonIndex] != Self.colon { colonIndex += 1 }
        var valueStart = colonIndex
        if colonIndex < count {
            valueStart += 1
            if valueStart < count, line[valueStart] == Self.space { valueStart += 1 }
        }
        let value = UnsafeBufferPointer(rebasing: line[valueStart..<count])
        let name = UnsafeBufferPointer(rebasing: line[0..<colonIndex])
        switch colonIndex {
        case 4 where name[0] == 0x64 && name[1] == 0x61 && name[2] == 0x74 && name[3] == 0x61:  // data
            // The event's data is the buffer without its last LF: what it would hold after this line.
            guard dataBuffer.count + value.count <= limits.maximumEventBytes else {
                exceed(.eventTooLarge)
                return nil
            }
            dataBuffer.append(contentsOf: value)
            dataBuffer.append(Self.lineFeed)
        case 5 where name[0] == 0x65 && name[1] == 0x76 && name[2] == 0x65 && name[3] == 0x6E && name[4] == 0x74:  // event
            eventTypeBuffer.removeAll(keepingCapacity: true)
            eventTypeBuffer.append(contentsOf: value)
        case 2 where name[0] == 0x69 && name[1] == 0x64:  // id
            if !value.contains(0) {
                idBuffer.removeAll(keepingCapacity: true)
                idBuffer.append(contentsOf: value)
                idChanged = true
            }
        case 5 where name[0] == 0x72 && name[1] == 0x65 && name[2] == 0x74 && name[3] == 0x72 && name[4] == 0x79:  // retry
            setReconnectionTime(value)
        default:
            break
        }
        return nil
    }

    private mutating func exceed(_ kind: LimitExceeded.Kind) {
        limitExceeded = LimitExceeded(
            kind: kind, limit: kind == .lineTooLong ? limits.maximumLineBytes : limits.maximumEventBytes)
    }

    private mutating func setReconnectionTime(_ value: UnsafeBufferPointer<UInt8>) {
        guard !value.isEmpty else { return }
        var milliseconds = 0
        for byte in value {
            guard byte >= 0x30, byte <= 0x39 else { return }
            let (times10, overflow1) = milliseconds.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int(byte &- 0x30))
            milliseconds = overflow1 || overflow2 ? Int.max : sum
        }
        reconnectionTime = milliseconds
    }

    private mutating func dispatch() -> ServerSentEvent? {
        if idChanged {
            lastEventID = String(decoding: idBuffer, as: UTF8.self)
            idChanged = false
        }
        guard !dataBuffer.isEmpty else {
            eventTypeBuffer.removeAll(keepingCapacity: true)
            return nil
        }
        dataBuffer.removeLast()
        let data = String(decoding: dataBuffer, as: UTF8.self)
        let type = eventTypeBuffer.isEmpty ? "message" : String(decoding: eventTypeBuffer, as: UTF8.self)
        dataBuffer.removeAll(keepingCapacity: true)
        if !eventTypeBuffer.isEmpty { eventTypeBuffer.removeAll(keepingCapacity: true) }
        return ServerSentEvent(id: lastEventID, type: type, data: data)
    }
}
