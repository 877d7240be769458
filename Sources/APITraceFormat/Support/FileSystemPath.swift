#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// File names as bytes, carried in a `String` without loss.
///
/// POSIX file names are bytes, not text: a folder can hold `caf\xE9.jsonl.gz` (Latin-1), which
/// `String(cString:)` would turn into `caf\u{FFFD}.jsonl.gz`, a name no `open` can find, and its
/// events would be lost. A name found on disk is turned into a string by ``string(fromBytes:)``:
/// valid UTF-8 stays as it is, and each byte that is not (or that would decode to the escape
/// range itself) becomes one private-use scalar `U+F700 + byte`. ``withBytes(of:_:)`` undoes it,
/// so every name found can be opened again, and every other string is its own UTF-8.
package enum FileSystemPath {
    /// The first of the 256 private-use scalars that stand for raw bytes.
    private static let escapeBase: UInt32 = 0xF700

    /// The string that stands for these name bytes (no NUL among them).
    package static func string<Bytes: Collection>(fromBytes bytes: Bytes) -> String where Bytes.Element == UInt8 {
        // Trace file names are ASCII: no check beyond that on the path every report walks.
        if bytes.allSatisfy({ $0 < 0x80 }) { return String(decoding: bytes, as: UTF8.self) }
        let array = Array(bytes)
        // The common case: valid UTF-8 without a scalar of the escape range.
        if let text = validUTF8(array[...]),
           !text.unicodeScalars.contains(where: { isEscape($0) }) {
            return text
        }
        var out = String.UnicodeScalarView()
        var i = 0
        while i < array.count {
            let length = validSequenceLength(array, at: i)
            if length > 0, let scalar = decodeScalar(array[i..<(i + length)]), !isEscape(scalar) {
                out.append(scalar)
                i += length
            } else {
                out.append(Unicode.Scalar(escapeBase + UInt32(array[i]))!)
                i += 1
            }
        }
        return String(out)
    }

    /// The string standing for a NUL-terminated name, as `readdir` hands it out.
    package static func string(fromCString name: UnsafePointer<CChar>) -> String {
        string(fromBytes: UnsafeRawBufferPointer(start: name, count: strlen(name)))
    }

    /// The name bytes `path` stands for, NUL-terminated, for a system call.
    package static func withBytes<T>(of path: String, _ body: (UnsafePointer<CChar>) throws -> T) rethrows -> T {
        // Every escape scalar is encoded as 0xEF 0x9C...0x9F: a string without 0xEF has none.
        guard path.utf8.contains(0xEF), path.unicodeScalars.contains(where: { isEscape($0) }) else { return try path.withCString(body) }
        var bytes: [CChar] = []
        for scalar in path.unicodeScalars {
            if isEscape(scalar) {
                bytes.append(CChar(bitPattern: UInt8(scalar.value - escapeBase)))
            } else {
                bytes.append(contentsOf: String(scalar).utf8.map { CChar(bitPattern: $0) })
            }
        }
        bytes.append(0)
        return try bytes.withUnsafeBufferPointer { try body($0.baseAddress!) }
    }

    /// The path for a person to read: raw bytes shown as `\xE9`.
    package static func display(_ path: String) -> String {
        guard path.unicodeScalars.contains(where: { isEscape($0) }) else { return path }
        var out = ""
        for scalar in path.unicodeScalars {
            if isEscape(scalar) {
                let byte = String(scalar.value - escapeBase, radix: 16, uppercase: true)
                out += "\\x" + (byte.count == 1 ? "0" : "") + byte
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// The text of `bytes` when they are well-formed UTF-8 (`String(validating:)` needs macOS 15).
    private static func validUTF8(_ bytes: ArraySlice<UInt8>) -> String? {
        let text = String(decoding: bytes, as: UTF8.self)
        return text.utf8.elementsEqual(bytes) ? text : nil
    }

    private static func isEscape(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value >= escapeBase && scalar.value < escapeBase + 256
    }

    /// Length of the well-formed UTF-8 sequence starting at `i` (0 when there is none).
    private static func validSequenceLength(_ bytes: [UInt8], at i: Int) -> Int {
        let lead = bytes[i]
        let length: Int
        switch lead {
        case 0x00...0x7F: return 1
        case 0xC2...0xDF: length = 2
        case 0xE0...0xEF: length = 3
        case 0xF0...0xF4: length = 4
        default: return 0
        }
        guard i + length <= bytes.count else { return 0 }
        return validUTF8(bytes[i..<(i + length)]) == nil ? 0 : length
    }

    private static func decodeScalar(_ bytes: ArraySlice<UInt8>) -> Unicode.Scalar? {
        guard let text = validUTF8(bytes) else { return nil }
        let scalars = text.unicodeScalars
        return scalars.count == 1 ? scalars.first : nil
    }
}
