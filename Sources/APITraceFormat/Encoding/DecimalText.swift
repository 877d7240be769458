/// An integer's decimal text, as `String(value)` writes it, made on the stack: the one decimal
/// writer of the encoders (trace lines' numbers, OTLP's composed texts), none allocating.
///
/// ```swift
/// DecimalText.with(-42) { out.append(contentsOf: $0) }   // "-42"
/// ```
package enum DecimalText {
    /// Calls `body` with the digits of `value` (a `-` first when negative), valid during the call.
    @inline(__always)
    package static func with<R>(_ value: Int64, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var room: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: any Int64's 19 digits and its sign
        return try withUnsafeMutableBytes(of: &room) { room in
            var at = room.count
            var v = value.magnitude
            repeat {
                at -= 1
                room[at] = UInt8(ascii: "0") + UInt8(v % 10)
                v /= 10
            } while v > 0
            if value < 0 {
                at -= 1
                room[at] = UInt8(ascii: "-")
            }
            return try body(UnsafeRawBufferPointer(rebasing: room[at...]))
        }
    }
}
