import Foundation

/// The fields of one JSON dictionary, read by key with an error that names the key: what a
/// ``DictionaryInitializable`` entity reads its values through.
///
/// A wrapper rather than methods on `[String: Any]`, so the dictionaries of an app that links
/// apitrace gain no members (an app's own `required(_:)` on dictionaries stays unambiguous).
///
/// ```swift
/// init(dictionary: [String: Any]) throws {
///     let fields = DictionaryFields(dictionary)
///     name = try fields.required("name")                     // String
///     owner = try fields.required("owner", as: Owner.self)  // a nested DictionaryInitializable
/// }
/// ```
public struct DictionaryFields {
    /// The dictionary read.
    public var dictionary: [String: Any]

    /// Reads the fields of `dictionary`.
    public init(_ dictionary: [String: Any]) {
        self.dictionary = dictionary
    }

    /// The value at `key` as `T`; throws ``DictionaryParsingError`` naming the key when it is missing,
    /// `null` or of another type.
    public func required<T>(_ key: String, as type: T.Type = T.self) throws -> T {
        guard let value = dictionary[key] else { throw DictionaryParsingError(.keyNotFound, key: key) }
        if let typed = value as? T { return typed }
        if value is NSNull { throw DictionaryParsingError(.valueNotFound, key: key, expected: String(describing: T.self)) }
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
