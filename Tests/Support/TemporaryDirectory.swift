import Foundation

/// A fresh folder under the system's temporary folder, removed when the value is released.
public final class TemporaryDirectory: Sendable {
    /// The folder's path.
    public let path: String

    /// Creates the folder, named after the calling test.
    public init(_ label: String = #function) {
        let name = "apitrace-test-\(label.filter { $0.isLetter || $0.isNumber })-\(UUID().uuidString.prefix(8))"
        path = NSTemporaryDirectory() + name
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// The path of `name` inside the folder.
    public func file(_ name: String) -> String { path + "/" + name }

    /// Trace files in the folder, sorted by name.
    public var traceFiles: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [])
            .filter { $0.hasSuffix(".jsonl.gz") }.sorted().map { file($0) }
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}
