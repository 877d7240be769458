public import APITraceFormat

extension TraceEvent.DecodeFailure {
    /// The decode failure for a `DecodingError`, with the full path including a missing key.
    ///
    /// `keyNotFound`'s coding path stops at the object that lacks the key, so the key is appended:
    /// a missing `stability` in the fourth app gives `data.apps[3].stability`.
    public init(_ error: DecodingError, entity: String, route: String? = nil) {
        let kind: Kind
        let path: String
        let key: String?
        let message: String
        switch error {
        case .keyNotFound(let missing, let context):
            kind = .keyNotFound
            path = DecodePath.string(context.codingPath + [missing])
            key = missing.stringValue
            message = context.debugDescription
        case .typeMismatch(_, let context):
            kind = .typeMismatch
            path = DecodePath.string(context.codingPath)
            key = Self.lastKey(context.codingPath)
            message = context.debugDescription
        case .valueNotFound(_, let context):
            kind = .valueNotFound
            path = DecodePath.string(context.codingPath)
            key = Self.lastKey(context.codingPath)
            message = context.debugDescription
        case .dataCorrupted(let context):
            kind = .dataCorrupted
            path = DecodePath.string(context.codingPath)
            key = Self.lastKey(context.codingPath)
            message = context.debugDescription
        @unknown default:
            kind = Kind(rawValue: "unknown")
            path = ""
            key = nil
            message = String(describing: error)
        }
        self.init(route: route, entity: entity, kind: kind, path: path, key: key, message: message)
    }

    private static func lastKey(_ path: [any CodingKey]) -> String? {
        guard let last = path.last else { return nil }
        if let index = last.intValue, last.stringValue == "Index \(index)" { return nil }
        return last.stringValue
    }
}
