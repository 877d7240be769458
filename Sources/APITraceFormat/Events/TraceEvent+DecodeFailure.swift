extension TraceEvent {
    /// A response that did not decode into its model (`"type":"decode_failure"`).
    public struct DecodeFailure: Sendable, Equatable {
        /// Route of the response that failed to decode (`route`).
        public var route: String?
        /// The Swift type being decoded, such as `App` (`entity`).
        public var entity: String
        /// What went wrong (`kind`).
        public var kind: Kind
        /// Full path to the failing key, such as `data.apps[3].stability` (`path`).
        public var path: String
        /// The failing key, such as `stability` (`key`).
        public var key: String?
        /// Human-readable description from the decoder (`message`). Never the payload.
        public var message: String

        /// Creates a decode failure record.
        public init(route: String? = nil, entity: String, kind: Kind, path: String, key: String? = nil, message: String) {
            self.route = route
            self.entity = entity
            self.kind = kind
            self.path = path
            self.key = key
            self.message = message
        }

        /// ``path`` with array indices folded to `[*]`, so failures of the same key in different
        /// elements group together: `data.apps[3].stability` becomes `data.apps[*].stability`.
        public var pathPattern: String { Self.foldIndices(path) }

        /// `path` with every `[digits]` replaced by `[*]`.
        package static func foldIndices(_ path: String) -> String {
            var out = ""
            var digits = ""
            var inBracket = false
            for c in path {
                if inBracket {
                    if c.isASCII && c.isNumber { digits.append(c); continue }
                    out += c == "]" && !digits.isEmpty ? "[*]" : "[" + digits + String(c)
                    inBracket = false
                    digits = ""
                } else if c == "[" {
                    inBracket = true
                } else {
                    out.append(c)
                }
            }
            if inBracket { out += "[" + digits }
            return out
        }

        /// The kind of decoding error. Unknown kinds written by newer producers are kept as they are.
        public struct Kind: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
            public var rawValue: String
            public init(rawValue: String) { self.rawValue = rawValue }
            public var description: String { rawValue }

            /// A required key was missing (`DecodingError.keyNotFound`).
            public static let keyNotFound = Kind(rawValue: "keyNotFound")
            /// A value had another type than expected (`DecodingError.typeMismatch`).
            public static let typeMismatch = Kind(rawValue: "typeMismatch")
            /// A required value was `null` (`DecodingError.valueNotFound`).
            public static let valueNotFound = Kind(rawValue: "valueNotFound")
            /// The data was not valid (`DecodingError.dataCorrupted`).
            public static let dataCorrupted = Kind(rawValue: "dataCorrupted")
        }
    }
}
