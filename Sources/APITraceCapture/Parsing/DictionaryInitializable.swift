import APITraceFormat
import Foundation

/// An entity built from a JSON dictionary, as in Jayme's `DictionaryInitializable`.
///
/// Throw ``DictionaryParsingError`` (most easily through `dictionary.required(_:as:)`) so
/// ``DictionaryParser`` can record which key failed.
///
/// ```swift
/// struct App: DictionaryInitializable {
///     var id: Int
///     var stability: Double
///     init(dictionary: [String: Any]) throws {
///         id = try dictionary.required("id")
///         stability = try dictionary.required("stability")
///     }
/// }
/// ```
public protocol DictionaryInitializable {
    /// Builds the entity, throwing when a key is missing or has the wrong type.
    init(dictionary: [String: Any]) throws
}

extension Dictionary where Key == String, Value == Any {
    /// The value at `key` as `T`; throws ``DictionaryParsingError`` naming the key when it is missing,
    /// `null` or of another type.
    public func required<T>(_ key: String, as type: T.Type = T.self) throws -> T {
        guard let value = self[key] else { throw DictionaryParsingError(.keyNotFound, key: key) }
        if let typed = value as? T { return typed }
        if value is NSNullLike { throw DictionaryParsingError(.valueNotFound, key: key, expected: String(describing: T.self)) }
        throw DictionaryParsingError(.typeMismatch, key: key, expected: String(describing: T.self))
    }

    /// The entity at `key`, built from a nested dictionary; a failure inside it names the full path
    /// (`owner.name`).
    public func required<T: DictionaryInitializable>(_ key: String, as type: T.Type = T.self) throws -> T {
        let nested: [String: Any] = try required(key)
        do {
            return try T(dictionary: nested)
        } catch var error as DictionaryParsingError {
            error.path.insert(key, at: 0)
            throw error
        }
    }
}
