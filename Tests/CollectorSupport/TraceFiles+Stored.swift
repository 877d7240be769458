public import APITraceTestSupport
import Crypto
import Foundation

// Here rather than beside TraceFiles: swift-crypto is the collector's dependency, and only the
// tests that check what the collector stored compare digests.
extension TraceFiles {
    /// Stored segments under a collector's folder: contents by SHA-256, with the relative paths of
    /// the files holding them. A file the collector appended to is cut into its segments at the
    /// offsets its producer's journal (`.producers/*.journal`) records; a file stored alone is one segment.
    public static func stored(under root: String) -> [String: [String]] {
        var byHash: [String: [String]] = [:]
        var appended = Set<String>()
        let journals = (try? FileManager.default.contentsOfDirectory(atPath: root + "/.producers")) ?? []
        for journal in journals where journal.hasSuffix(".journal") {
            let text = (try? String(contentsOfFile: root + "/.producers/" + journal, encoding: .utf8)) ?? ""
            var segments: [(file: String, from: Int, to: Int)] = []
            var current: String?
            var inCurrent: [Int] = []
            for line in text.split(separator: "\n") {
                let fields = line.split(separator: " ").map(String.init)
                switch fields.first {
                case "O": current = fields[1]; inCurrent = []
                case "A":
                    guard let file = current, let end = Int(fields[2]) else { continue }
                    segments.append((file, inCurrent.last.map { segments[$0].to } ?? 0, end))
                    inCurrent.append(segments.count - 1)
                case "S":
                    for i in inCurrent { segments[i].file = fields[1] }
                    current = nil
                default: break
                }
            }
            for segment in segments {
                let bytes = [UInt8](FileManager.default.contents(atPath: root + "/" + segment.file) ?? Data())
                appended.insert(segment.file)
                guard bytes.count >= segment.to else { continue }
                byHash[sha256Hex(Array(bytes[segment.from..<segment.to])), default: []].append(segment.file)
            }
        }
        for relative in allFiles(under: root) where relative.hasSuffix(".jsonl.gz") && !appended.contains(relative) {
            let bytes = [UInt8](FileManager.default.contents(atPath: root + "/" + relative) ?? Data())
            byHash[sha256Hex(bytes), default: []].append(relative)
        }
        return byHash
    }


    /// The SHA-256 of `bytes`, as 64 lowercase hex digits.
    public static func sha256Hex(_ bytes: [UInt8]) -> String {
        SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
    }
}
