import Foundation

/// Finds the model type that failed: the innermost `Decodable` type whose value contains the
/// failing path, such as `App` for `data.apps[1].stability` inside `Envelope<AppsPayload>`.
///
/// `DecodingError` names no type, so on failure (never on success) the data is decoded a second
/// time through a decoder that notes the type of every value it is asked for, and where.
/// Standard-library values (numbers, strings, arrays, optionals, dictionaries) are not models.
enum ModelTypeProbe {
    /// The model type at `failingPath` when decoding `type` from `data` with `decoder`, or `nil`.
    static func modelType<T: Decodable>(_ type: T.Type, from data: Data, failingPath: [any CodingKey], decoder: JSONDecoder) -> String? {
        let log = DecodedTypes()
        let probeDecoder = JSONDecoder()
        probeDecoder.keyDecodingStrategy = decoder.keyDecodingStrategy
        probeDecoder.dateDecodingStrategy = decoder.dateDecodingStrategy
        probeDecoder.dataDecodingStrategy = decoder.dataDecodingStrategy
        probeDecoder.nonConformingFloatDecodingStrategy = decoder.nonConformingFloatDecodingStrategy
        probeDecoder.userInfo = decoder.userInfo
        probeDecoder.userInfo[DecodedTypes.key] = log
        _ = try? probeDecoder.decode(Probe<T>.self, from: data)
        let target = failingPath.map(DecodedTypes.component)
        var best: (depth: Int, name: String)?
        for (path, name) in log.entries where path.count <= target.count && Array(target.prefix(path.count)) == path {
            if best == nil || path.count >= best!.depth { best = (path.count, name) }
        }
        return best?.name
    }

    static func isModel(_ type: Any.Type) -> Bool {
        let name = String(reflecting: type)
        for prefix in ["Swift.", "Foundation."] where name.hasPrefix(prefix) { return false }
        return !(type is any LossyArrayMarker.Type)
    }
}

/// Types seen by the probe, with the path of their value.
final class DecodedTypes: @unchecked Sendable {
    // @unchecked: used by one decode on one thread.
    static let key = CodingUserInfoKey(rawValue: "apitrace.decodedTypes")!
    var entries: [([String], String)] = []

    func note(_ type: Any.Type, at path: [any CodingKey]) {
        guard ModelTypeProbe.isModel(type) else { return }
        entries.append((path.map(Self.component), String(describing: type)))
    }

    /// A path component that compares equal whatever a decoder calls its indices (`Index 1` or `1`).
    static func component(_ key: any CodingKey) -> String {
        if let index = key.intValue, key.stringValue == "Index \(index)" || key.stringValue == String(index) { return "#\(index)" }
        return key.stringValue
    }
}

/// Marks ``LossyArray``, a wrapper rather than a model.
protocol LossyArrayMarker {}

/// Decodes `T` through ``ProbeDecoder`` so that every nested value's type is noted.
private struct Probe<T: Decodable>: Decodable {
    init(from decoder: any Decoder) throws {
        guard let log = decoder.userInfo[DecodedTypes.key] as? DecodedTypes else { return }
        log.note(T.self, at: decoder.codingPath)
        _ = try T(from: ProbeDecoder(base: decoder, log: log))
    }
}

private struct ProbeDecoder: Decoder {
    let base: any Decoder
    let log: DecodedTypes
    var codingPath: [any CodingKey] { base.codingPath }
    var userInfo: [CodingUserInfoKey: Any] { base.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(ProbeKeyed(base: try base.container(keyedBy: type), log: log))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        ProbeUnkeyed(base: try base.unkeyedContainer(), log: log)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        ProbeSingle(base: try base.singleValueContainer(), decoder: self)
    }
}

/// Decodes a nested value: models through the probe (noting them), everything else as the base would.
private func probeDecode<T: Decodable>(_ type: T.Type, path: [any CodingKey], log: DecodedTypes, superDecoder: () throws -> any Decoder, plain: () throws -> T) throws -> T {
    guard ModelTypeProbe.isModel(type) || type is any LossyArrayMarker.Type else { return try plain() }
    log.note(type, at: path)
    return try T(from: ProbeDecoder(base: try superDecoder(), log: log))
}

private struct ProbeKeyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let base: KeyedDecodingContainer<Key>
    let log: DecodedTypes
    var codingPath: [any CodingKey] { base.codingPath }
    var allKeys: [Key] { base.allKeys }

    func contains(_ key: Key) -> Bool { base.contains(key) }
    func decodeNil(forKey key: Key) throws -> Bool { try base.decodeNil(forKey: key) }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try base.decode(type, forKey: key) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try base.decode(type, forKey: key) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try base.decode(type, forKey: key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try base.decode(type, forKey: key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try base.decode(type, forKey: key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try base.decode(type, forKey: key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try base.decode(type, forKey: key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try base.decode(type, forKey: key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try base.decode(type, forKey: key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try base.decode(type, forKey: key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try base.decode(type, forKey: key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try base.decode(type, forKey: key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try base.decode(type, forKey: key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try base.decode(type, forKey: key) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try probeDecode(type, path: codingPath + [key], log: log, superDecoder: { try base.superDecoder(forKey: key) }) {
            // Arrays and optionals of models: decode their elements through the probe too.
            if let nested = try? base.superDecoder(forKey: key) { return try T(from: ProbeDecoder(base: nested, log: log)) }
            return try base.decode(type, forKey: key)
        }
    }
    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        KeyedDecodingContainer(ProbeKeyed<NestedKey>(base: try base.nestedContainer(keyedBy: type, forKey: key), log: log))
    }
    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        ProbeUnkeyed(base: try base.nestedUnkeyedContainer(forKey: key), log: log)
    }
    func superDecoder() throws -> any Decoder { ProbeDecoder(base: try base.superDecoder(), log: log) }
    func superDecoder(forKey key: Key) throws -> any Decoder { ProbeDecoder(base: try base.superDecoder(forKey: key), log: log) }
}

private struct ProbeUnkeyed: UnkeyedDecodingContainer {
    var base: any UnkeyedDecodingContainer
    let log: DecodedTypes
    var codingPath: [any CodingKey] { base.codingPath }
    var count: Int? { base.count }
    var isAtEnd: Bool { base.isAtEnd }
    var currentIndex: Int { base.currentIndex }

    mutating func decodeNil() throws -> Bool { try base.decodeNil() }
    mutating func decode(_ type: Bool.Type) throws -> Bool { try base.decode(type) }
    mutating func decode(_ type: String.Type) throws -> String { try base.decode(type) }
    mutating func decode(_ type: Double.Type) throws -> Double { try base.decode(type) }
    mutating func decode(_ type: Float.Type) throws -> Float { try base.decode(type) }
    mutating func decode(_ type: Int.Type) throws -> Int { try base.decode(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try base.decode(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try base.decode(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try base.decode(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try base.decode(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try base.decode(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try base.decode(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try base.decode(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try base.decode(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try base.decode(type) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let path = codingPath + [ProbeIndex(intValue: currentIndex)]
        let nested = try base.superDecoder()
        if ModelTypeProbe.isModel(type) { log.note(type, at: path) }
        return try T(from: ProbeDecoder(base: nested, log: log))
    }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        KeyedDecodingContainer(ProbeKeyed<NestedKey>(base: try base.nestedContainer(keyedBy: type), log: log))
    }
    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        ProbeUnkeyed(base: try base.nestedUnkeyedContainer(), log: log)
    }
    mutating func superDecoder() throws -> any Decoder { ProbeDecoder(base: try base.superDecoder(), log: log) }
}

private struct ProbeSingle: SingleValueDecodingContainer {
    let base: any SingleValueDecodingContainer
    let decoder: ProbeDecoder
    var codingPath: [any CodingKey] { base.codingPath }

    func decodeNil() -> Bool { base.decodeNil() }
    func decode(_ type: Bool.Type) throws -> Bool { try base.decode(type) }
    func decode(_ type: String.Type) throws -> String { try base.decode(type) }
    func decode(_ type: Double.Type) throws -> Double { try base.decode(type) }
    func decode(_ type: Float.Type) throws -> Float { try base.decode(type) }
    func decode(_ type: Int.Type) throws -> Int { try base.decode(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try base.decode(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try base.decode(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try base.decode(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try base.decode(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try base.decode(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try base.decode(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try base.decode(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try base.decode(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try base.decode(type) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if ModelTypeProbe.isModel(type) { decoder.log.note(type, at: codingPath) }
        return try T(from: decoder)
    }
}

private struct ProbeIndex: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(intValue: Int) { self.intValue = intValue; self.stringValue = "Index \(intValue)" }
    init?(stringValue: String) { return nil }
}
