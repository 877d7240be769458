package import APITraceFormat

/// The fields of a request that its HAR entry shows, in a compact binary form: what the streamed
/// export holds (and sorts, and spills) between reading a line and writing its entry, so each line
/// is scanned once (``TraceRecordScanner``) and never again.
///
/// Layout: a `UInt32` of presence bits, the end time (`Int64`), each present number (8 bytes,
/// little-endian, in the order of ``Field``), then each present text as a `UInt32` length and its
/// decoded UTF-8 bytes. Smaller than the line (no keys, no quotes, no escapes, the time as a number),
/// and read back without any parsing.
package enum HAREntryRecord {
    /// Presence bits, and the order of the values after the end time.
    private enum Field {
        static let duration: UInt32 = 1 << 0
        static let dns: UInt32 = 1 << 1
        static let connect: UInt32 = 1 << 2
        static let tls: UInt32 = 1 << 3
        static let ttfb: UInt32 = 1 << 4
        static let attempt: UInt32 = 1 << 5
        static let bytesIn: UInt32 = 1 << 6
        static let bytesOut: UInt32 = 1 << 7
        static let status: UInt32 = 1 << 8
        static let reused: UInt32 = 1 << 9
        static let reusedTrue: UInt32 = 1 << 10
        static let method: UInt32 = 1 << 11
        static let route: UInt32 = 1 << 12
        static let host: UInt32 = 1 << 13
        static let error: UInt32 = 1 << 14
        static let session: UInt32 = 1 << 15
        static let traceID: UInt32 = 1 << 16
        static let networkProtocol: UInt32 = 1 << 17
    }

    /// Appends the entry fields of a scanned `request` record to `out`.
    package static func append(_ r: TraceRecord, to out: inout [UInt8]) {
        var flags: UInt32 = 0
        if r.durationMs != nil { flags |= Field.duration }
        if r.dnsMs != nil { flags |= Field.dns }
        if r.connectMs != nil { flags |= Field.connect }
        if r.tlsMs != nil { flags |= Field.tls }
        if r.ttfbMs != nil { flags |= Field.ttfb }
        if r.attempt != nil { flags |= Field.attempt }
        if r.bytesIn != nil { flags |= Field.bytesIn }
        if r.bytesOut != nil { flags |= Field.bytesOut }
        if r.status != nil { flags |= Field.status }
        if let reused = r.reused { flags |= Field.reused | (reused ? Field.reusedTrue : 0) }
        if r.method != nil { flags |= Field.method }
        if r.route != nil { flags |= Field.route }
        if r.host != nil { flags |= Field.host }
        if r.error != nil { flags |= Field.error }
        if r.session != nil { flags |= Field.session }
        if r.traceID != nil { flags |= Field.traceID }
        if r.networkProtocol != nil { flags |= Field.networkProtocol }
        func word<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { out.append(contentsOf: $0) } }
        func double(_ value: Double?) { if let value { word(value.bitPattern) } }
        func integer(_ value: Int64?) { if let value { word(value) } }
        func text(_ value: RawText?) {
            guard let value else { return }
            word(UInt32(truncatingIfNeeded: value.bytes.count))
            out.append(contentsOf: value.bytes)
        }
        word(flags)
        word(r.timestamp)
        double(r.durationMs); double(r.dnsMs); double(r.connectMs); double(r.tlsMs); double(r.ttfbMs)
        integer(r.attempt); integer(r.bytesIn); integer(r.bytesOut); integer(r.status.map(Int64.init))
        text(r.method); text(r.route); text(r.host); text(r.error); text(r.session); text(r.traceID); text(r.networkProtocol)
    }

    /// The record of bytes ``append(_:to:)`` wrote (its texts are slices of `bytes`, valid while they
    /// are); nil when the bytes are not such a record.
    package static func record(_ bytes: UnsafeRawBufferPointer) -> TraceRecord? {
        var at = 0
        func word<T: FixedWidthInteger>(_: T.Type) -> T? {
            guard bytes.count - at >= MemoryLayout<T>.size else { return nil }
            defer { at += MemoryLayout<T>.size }
            return T(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: T.self))
        }
        guard let flags = word(UInt32.self), let timestamp = word(Int64.self) else { return nil }
        var damaged = false
        func double(_ bit: UInt32) -> Double? {
            guard flags & bit != 0 else { return nil }
            guard let bits = word(UInt64.self) else { damaged = true; return nil }
            return Double(bitPattern: bits)
        }
        func integer(_ bit: UInt32) -> Int64? {
            guard flags & bit != 0 else { return nil }
            guard let value = word(Int64.self) else { damaged = true; return nil }
            return value
        }
        func text(_ bit: UInt32) -> RawText? {
            guard flags & bit != 0 else { return nil }
            guard let count = word(UInt32.self).map(Int.init), bytes.count - at >= count else { damaged = true; return nil }
            defer { at += count }
            return RawText(bytes: UnsafeRawBufferPointer(rebasing: bytes[at..<(at + count)]), hasEscapes: false)
        }
        var r = TraceRecord()
        r.kind = .request
        r.timestamp = timestamp
        r.durationMs = double(Field.duration)
        r.dnsMs = double(Field.dns)
        r.connectMs = double(Field.connect)
        r.tlsMs = double(Field.tls)
        r.ttfbMs = double(Field.ttfb)
        r.attempt = integer(Field.attempt)
        r.bytesIn = integer(Field.bytesIn)
        r.bytesOut = integer(Field.bytesOut)
        r.status = integer(Field.status).map { Int(truncatingIfNeeded: $0) }
        r.reused = flags & Field.reused != 0 ? flags & Field.reusedTrue != 0 : nil
        r.method = text(Field.method)
        r.route = text(Field.route)
        r.host = text(Field.host)
        r.error = text(Field.error)
        r.session = text(Field.session)
        r.traceID = text(Field.traceID)
        r.networkProtocol = text(Field.networkProtocol)
        guard !damaged, at == bytes.count else { return nil }
        return r
    }
}
