/// One OpenTelemetry attribute (`KeyValue`): a key and a string, integer, double or boolean value.
public struct OTLPAttribute: Sendable, Equatable {
    /// The value of an attribute (`AnyValue`, the scalar kinds only).
    public enum Value: Sendable, Equatable {
        case string(String)
        case int(Int64)
        case double(Double)
        case bool(Bool)
    }

    /// The attribute's name, such as `http.request.method`.
    public var key: String
    /// Its value.
    public var value: Value

    /// Creates an attribute.
    public init(_ key: String, _ value: Value) {
        self.key = key
        self.value = value
    }
}

extension [OTLPAttribute] {
    /// Appends `key` with a string value when there is one.
    mutating func add(_ key: String, _ value: String?) {
        if let value { append(OTLPAttribute(key, .string(value))) }
    }

    /// Appends `key` with an integer value when there is one.
    mutating func add(_ key: String, _ value: Int?) {
        if let value { append(OTLPAttribute(key, .int(Int64(value)))) }
    }

    /// Appends `key` with an integer value when there is one.
    mutating func add(_ key: String, _ value: Int64?) {
        if let value { append(OTLPAttribute(key, .int(value))) }
    }

    /// Appends `key` with a double value when there is one.
    mutating func add(_ key: String, _ value: Double?) {
        if let value { append(OTLPAttribute(key, .double(value))) }
    }

    /// Appends `key` with a boolean value when there is one.
    mutating func add(_ key: String, _ value: Bool?) {
        if let value { append(OTLPAttribute(key, .bool(value))) }
    }
}
