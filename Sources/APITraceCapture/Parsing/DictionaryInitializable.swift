import Foundation

/// An entity built from a JSON dictionary, as in Jayme's `DictionaryInitializable`.
///
/// Throw ``DictionaryParsingError`` (most easily through ``DictionaryFields``'s `required(_:)`) so
/// ``DictionaryParser`` can record which key failed.
///
/// ```swift
/// struct App: DictionaryInitializable {
///     var id: Int
///     var stability: Double
///     init(dictionary: [String: Any]) throws {
///         let fields = DictionaryFields(dictionary)
///         id = try fields.required("id")
///         stability = try fields.required("stability")
///     }
/// }
/// ```
public protocol DictionaryInitializable {
    /// Builds the entity, throwing when a key is missing or has the wrong type.
    init(dictionary: [String: Any]) throws
}
