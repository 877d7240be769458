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

    func flush() {
        guard !buffer.isEmpty else { return }
        buffer.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = Foundation.write(1, raw.baseAddress! + offset, raw.count - offset)
                if n <= 0 { if errno == EINTR { continue }; return }
                offset += n
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }

    deinit { flush() }
}
