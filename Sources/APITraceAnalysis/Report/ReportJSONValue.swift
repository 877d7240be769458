import APITraceFormat
import Foundation

/// A JSON document built in order, printed with two-space indentation; keys keep the order given
/// so the report's JSON is stable for diffs and scripts.
enum ReportJSONValue {
    case object([(String, ReportJSONValue)])
    case array([ReportJSONValue])
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)
    case null

    static func optional(_ value: Double?) -> ReportJSONValue { value.map { .double($0) } ?? .null }
    static func optional(_ value: String?) -> ReportJSONValue { value.map { .string($0) } ?? .null }

    func printed() -> String {
        var out: [UInt8] = []
        write(to: &out, indent: 0)
        out.append(0x0A)
        return String(decoding: out, as: UTF8.self)
    }

    private func write(to out: inout [UInt8], indent: Int) {
        func newline(_ level: Int) {
            out.append(0x0A)
            out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: level * 2))
        }
        switch self {
        case .object(let members):
            guard !members.isEmpty else { out.append(contentsOf: Array("{}".utf8)); return }
            out.append(UInt8(ascii: "{"))
            for (i, (key, value)) in members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                newline(indent + 1)
                Self.appendString(key, to: &out)
                out.append(contentsOf: Array(": ".utf8))
                value.write(to: &out, indent: indent + 1)
            }
            newline(indent)
            out.append(UInt8(ascii: "}"))
        case .array(let items):
            guard !items.isEmpty else { out.append(contentsOf: Array("[]".utf8)); return }
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                newline(indent + 1)
                item.write(to: &out, indent: indent + 1)
            }
            newline(indent)
            out.append(UInt8(ascii: "]"))
        case .string(let s):
            Self.appendString(s, to: &out)
        case .int(let n):
            out.append(contentsOf: Array(String(n).utf8))
        case .double(let x):
            guard x.isFinite else { out.append(contentsOf: Array("null".utf8)); return }
            if x == x.rounded(), abs(x) < 1e15 {
                out.append(contentsOf: Array(String(Int64(x)).utf8))
            } else {
                // Six significant decimals are plenty for rates and milliseconds, and stay readable.
                var text = String(format: "%.6g", x)
                if text.contains("e") { text = String(x) }
                out.append(contentsOf: Array(text.utf8))
            }
        case .bool(let b):
            out.append(contentsOf: Array((b ? "true" : "false").utf8))
        case .null:
            out.append(contentsOf: Array("null".utf8))
        }
    }

    private static func appendString(_ s: String, to out: inout [UInt8]) {
        var json = JSONOutput()
        json.appendString(s)
        out.append(contentsOf: json.bytes)
    }
}
