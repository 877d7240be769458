/// The values of a record's nested JSON texts (`user_info`, `metadata`, `underlying`), which the
/// scanner checked when it read the line: one decoding for the event reader and the OTLP mapping.
extension Optional where Wrapped == RawText {
    /// The map of an object's JSON text (string values decoded, others as JSON text); empty when absent.
    package var jsonStringMap: [String: String] {
        guard let json = self else { return [:] }
        var s = JSONScanner(json.bytes)
        return (try? s.readStringMap()) ?? [:]
    }

    /// The strings of an array's JSON text; empty when absent.
    package var jsonStrings: [String] {
        guard let json = self else { return [] }
        var s = JSONScanner(json.bytes)
        return (try? s.readStringArray()) ?? []
    }
}
