import Foundation

/// Buffered writes to standard output: printing a line per event through `print` is several times slower.
final class StandardOutput {
    private var buffer: [UInt8] = []

    init() { buffer.reserveCapacity(1 << 16) }

    func write(_ bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
        if buffer.count >= 1 << 16 { flush() }
    }

    func write(_ text: String) { write(Array(text.utf8)) }

    /// Writes a block already large enough to go out as it is (after what is buffered).
    func write(block: UnsafeRawBufferPointer) {
        flush()
        Self.writeAll(block)
    }

    func flush() {
        guard !buffer.isEmpty else { return }
        buffer.withUnsafeBytes { Self.writeAll($0) }
        buffer.removeAll(keepingCapacity: true)
    }

    private static func writeAll(_ raw: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < raw.count {
            let n = Foundation.write(1, raw.baseAddress! + offset, raw.count - offset)
            if n <= 0 { if errno == EINTR { continue }; return }
            offset += n
        }
    }

    deinit { flush() }
}
