import APITraceTestSupport
import APITraceCapture

/// The models the decoding tests read from ``TestServer``.
struct App: Decodable, Equatable, Sendable {
    var id: Int
    var name: String
    var stability: Double
}

struct AppsResponse: Decodable, Sendable {
    struct Payload: Decodable, Sendable { var apps: [App] }
    var data: Payload
}

struct LossyAppsResponse: Decodable, Sendable {
    struct Payload: Decodable, Sendable { @LossyArray var apps: [App] }
    var data: Payload
}

struct GroupsResponse: Decodable, Sendable {
    struct Group: Decodable, Sendable { var apps: [App] }
    struct Payload: Decodable, Sendable { var groups: [Group] }
    var data: Payload
}

/// The same app, built Jayme-style from a dictionary.
struct DictionaryApp: DictionaryInitializable, Equatable {
    var id: Int
    var name: String
    var stability: Double
    init(dictionary: [String: Any]) throws {
        let fields = DictionaryFields(dictionary)
        id = try fields.required("id")
        name = try fields.required("name")
        stability = try fields.required("stability")
    }
}

struct Owner: DictionaryInitializable {
    var name: String
    init(dictionary: [String: Any]) throws { name = try DictionaryFields(dictionary).required("name") }
}

struct OwnedApp: DictionaryInitializable {
    var owner: Owner
    init(dictionary: [String: Any]) throws { owner = try DictionaryFields(dictionary).required("owner", as: Owner.self) }
}
