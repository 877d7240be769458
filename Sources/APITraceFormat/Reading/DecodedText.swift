/// Room for the decoded text of one line's escaped keys and values (``TraceRecordScanner``).
///
/// Sized to the line, because no escape decodes to more bytes than it takes, and never moved while
/// the line is read, so every ``RawText`` pointing into it stays valid until the next line.
final class DecodedText {
    private var base: UnsafeMutableRawPointer
    private var capacity: Int
    private var used = 0

    init() {
        capacity = 256
        base = .allocate(byteCount: capacity, alignment: 1)
    }

    deinit { base.deallocate() }

    /// Forgets the last line's text and makes room for a line of `capacity` bytes.
    func reset(capacity needed: Int) {
        used = 0
        guard needed > capacity else { return }
        base.deallocate()
        capacity = max(needed, capacity * 2)
        base = .allocate(byteCount: capacity, alignment: 1)
    }

    /// Decodes raw string contents (escapes checked by ``JSONScanner``) and returns the text.
    func decode(_ raw: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        let start = base + used
        let n = JSONScanner.decodeEscapes(raw, into: start)
        used += n
        return UnsafeRawBufferPointer(start: start, count: n)
    }
}
