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

        /// `path` with every `[digits]` replaced by `[*]`: ``foldIndices(_:into:)`` over its UTF-8.
        package static func foldIndices(_ path: String) -> String {
            var path = path
            var out: [UInt8] = []
            path.withUTF8 { out.reserveCapacity($0.count); foldIndices(UnsafeRawBufferPointer($0), into: &out) }
            // Only ASCII `[digits]` runs are replaced by ASCII: valid UTF-8 stays valid.
            return String(decoding: out, as: UTF8.self)
        }

        /// The one fold of decode paths, on raw UTF-8 (the readers' hot path calls it on the bytes of
        /// a line): every `[`, one or more ASCII digits, `]` becomes `[*]`; every other byte is copied.
        ///
        /// Bytes, not `Character`s: a combining mark after `]` (`[1]\u{301}`) makes one grapheme of
        /// them, which a character-wise fold would not see as a bracket; escaped and raw spellings of
        /// one path must fold alike.
        package static func foldIndices(_ path: UnsafeRawBufferPointer, into out: inout [UInt8]) {
            var i = 0
            let n = path.count
            while i < n {
                let c = path[i]
                guard c == UInt8(ascii: "[") else { out.append(c); i += 1; continue }
                var j = i + 1
                while j < n, path[j] >= UInt8(ascii: "0"), path[j] <= UInt8(ascii: "9") { j += 1 }
                if j < n, path[j] == UInt8(ascii: "]"), j > i + 1 {
                    out.append(contentsOf: [UInt8(ascii: "["), UInt8(ascii: "*"), UInt8(ascii: "]")])
                    i = j + 1
                } else {
                    // Not an index: copy `[` and the digits; the byte after them is looked at afresh
                    // (it may open the next bracket: `a[[1]` is `a[[*]`).
                    out.append(contentsOf: UnsafeRawBufferPointer(rebasing: path[i..<j]))
                    i = j
                }
            }
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
