import APITraceFormat
import Foundation

/// libFuzzer entry point, differential: the input is one trace line, read by the one line decoder
/// (`TraceLine.decode`, which every command and the collector share) and by a reference JSON parser,
/// Foundation's `JSONSerialization`, on the same bytes. They must agree on whether the bytes are a
/// JSON object at all and, for every event, on the type and on each request field readers use
/// (method, route, status, duration, error, session). A disagreement traps, so libFuzzer keeps the input.
///
/// Left out on purpose (differences of the reference, documented in Docs/fuzzing.md): inputs holding
/// NUL bytes or starting with a byte-order mark (Foundation guesses UTF-16/32 from them, or skips
/// the mark; a trace line is UTF-8 without one), nesting near the 512 levels both parsers allow, and
/// numbers Foundation cannot represent (over 300 digits, or a three-digit exponent), and trailing
/// commas before `}` or `]`, which Foundation accepts and RFC 8259, `jq` and Python refuse.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLineDecoder(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    guard !bytes.contains(0), !(size >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF),
          bytes.lazy.filter({ $0 == UInt8(ascii: "[") || $0 == UInt8(ascii: "{") }).count < 500,
          !hasUnrepresentableNumber(bytes), !hasTrailingComma(bytes) else { return 0 }

    let reference = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
    let ours: Result<TraceLine, TraceLine.Invalid> = Result { () throws(TraceLine.Invalid) in try TraceLine.decode(bytes) }
    let oursIsObject: Bool
    switch ours {
    case .success: oursIsObject = true
    case .failure(let invalid): oursIsObject = invalid.isJSONObject
    }
    guard let object = reference as? [String: Any] else {
        if oursIsObject { fatalError("we read a JSON object, the reference does not (\(reference == nil ? "invalid" : "not an object")): \(ours)") }
        return 0
    }
    if !oursIsObject { fatalError("the reference reads a JSON object, we do not: \(ours)") }

    let known = ["request", "decode_failure", "error", "sse", "websocket", "log", "dropped"]
    switch ours {
    case .success(.unknown(let type)):
        if let t = object["type"] as? String, known.contains(t) || t == "header" {
            fatalError("type \(t) read by the reference, unknown type \(type) to us")
        }
        check(object["type"] as? String == type, "type", object, ours)
    case .success(.event(let event)):
        guard case .request(let r) = event.payload else {
            check(known.contains(object["type"] as? String ?? ""), "type", object, ours)
            return 0
        }
        check(object["type"] as? String == "request", "type", object, ours)
        check(object["method"] as? String == r.method, "method", object, ours)
        check(object["route"] as? String == r.route, "route", object, ours)
        check(int(object["status"]) == r.status, "status", object, ours)
        check((object["duration_ms"] as? NSNumber)?.doubleValue == r.durationMs, "duration_ms", object, ours)
        check(object["error"] as? String == r.error, "error", object, ours)
        check(object["session"] as? String == event.session, "session", object, ours)
    default:
        break
    }
    return 0
}

/// A JSON number as the decoder reads an integer field (truncated toward zero); nil for null or absent.
private func int(_ value: Any?) -> Int? {
    guard let n = value as? NSNumber else { return nil }
    return Int(exactly: n.doubleValue.rounded(.towardZero)) ?? Int(truncating: n)
}

private func check(_ ok: Bool, _ field: String, _ object: [String: Any], _ ours: Result<TraceLine, TraceLine.Invalid>) {
    if !ok { fatalError("\(field) differs: reference \(String(describing: object[field])), ours \(ours)") }
}

/// A number token Foundation cannot represent: more than 300 digits, or an exponent of 3+ digits.
private func hasUnrepresentableNumber(_ b: UnsafeRawBufferPointer) -> Bool {
    var digits = 0
    var exponentDigits = -1
    for c in b {
        if c >= 48 && c <= 57 {
            digits += 1
            if exponentDigits >= 0 { exponentDigits += 1 }
            if digits > 300 || exponentDigits >= 3 { return true }
        } else if c == UInt8(ascii: "e") || c == UInt8(ascii: "E") {
            exponentDigits = 0
        } else if c != UInt8(ascii: ".") && c != UInt8(ascii: "+") && c != UInt8(ascii: "-") {
            digits = 0
            exponentDigits = -1
        }
    }
    return false
}

/// A `,` followed, after whitespace, by `}` or `]`.
private func hasTrailingComma(_ b: UnsafeRawBufferPointer) -> Bool {
    for i in b.indices where b[i] == UInt8(ascii: ",") {
        var j = i + 1
        while j < b.count, b[j] == 0x20 || b[j] == 0x09 || b[j] == 0x0A || b[j] == 0x0D { j += 1 }
        if j < b.count, b[j] == UInt8(ascii: "}") || b[j] == UInt8(ascii: "]") { return true }
    }
    return false
}
