import APITraceFormat

/// Room to compose one text from pieces (a span's name, its `url.full`, its `error.type`), kept
/// across events: each piece is one copy into room already there, where appending to an array
/// took its generic path (a tenth of the mapping's cost).
struct OTLPTextBuffer {
    /// `storage[..<count]` is the text; the rest is room.
    private var storage = [UInt8](repeating: 0, count: 256)
    /// Bytes of the text.
    private(set) var count = 0

    /// Forgets the text, keeping the room.
    mutating func removeAll() { count = 0 }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        if storage.count - count < bytes.count { grow(bytes.count) }
        let at = count
        storage.withUnsafeMutableBytes { $0.baseAddress!.advanced(by: at).copyMemory(from: base, byteCount: bytes.count) }
        count += bytes.count
    }

    mutating func append(_ text: StaticString) { append(text.bytes) }

    mutating func append(_ byte: UInt8) {
        if count == storage.count { grow(1) }
        storage[count] = byte
        count += 1
    }

    /// `value` in decimal, as `String(value)` writes it.
    mutating func append(decimal value: Int) {
        DecimalText.with(Int64(value)) { append($0) }
    }

    /// The text, for the duration of `body`.
    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try storage.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
    }

    @inline(never)
    private mutating func grow(_ more: Int) {
        storage.append(contentsOf: repeatElement(0, count: max(count + more, storage.count * 2) - storage.count))
    }
}
