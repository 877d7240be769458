public import APITraceFormat
import Foundation

/// Why a dictionary did not build an entity: which key, where, and what was wrong.
public struct DictionaryParsingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was wrong, with the same names as decode failures in traces.
    public var kind: TraceEvent.DecodeFailure.Kind
    /// The failing key.
    public var key: String
    /// Keys of the nested objects above the key, outermost first.
    public var path: [String]
    /// The type that was expected, for type mismatches.
    public var expected: String?

    /// Creates an error.
    public init(_ kind: TraceEvent.DecodeFailure.Kind, key: String, path: [String] = [], expected: String? = nil) {
        self.kind = kind
        self.key = key
        self.path = path
        self.expected = expected
    }

    /// The path from the entity, key included: `owner.name`.
    public var relativePath: String { (path + [key]).joined(separator: ".") }

    public var description: String {
        switch kind {
        case .keyNotFound: "key '\(key)' not found at \(relativePath)"
        case .valueNotFound: "null value for '\(key)' at \(relativePath)" + (expected.map { ", expected \($0)" } ?? "")
        default: "\(kind) for '\(key)' at \(relativePath)" + (expected.map { ", expected \($0)" } ?? "")
        }
    }
}
