import Foundation

/// `{"data": ...}`, the envelope every endpoint of the sample API answers with.
struct Envelope<Payload: Decodable>: Decodable {
    let data: Payload
}

/// A newspaper, from `GET /newspapers`.
public struct Newspaper: Decodable, Sendable, Equatable {
    public let id: Int
    public let name: String
    public let language: String
}

/// A news item, from `GET /news/{id}`, `GET /newspapers/{id}/news` and the SSE stream.
public struct News: Decodable, Sendable, Equatable {
    public let id: Int
    public let newspaperID: Int
    public let title: String
    public let body: String

    enum CodingKeys: String, CodingKey {
        case id, title, body
        case newspaperID = "newspaper_id"
    }
}

/// An app as Fabric's API describes it, from `GET /apps`. `stability` is required: when the
/// server leaves it out, decoding fails at `data.apps[N].stability`, which apitrace records.
public struct App: Decodable, Sendable, Equatable {
    public let id: String
    public let name: String
    public let platform: String
    public let stability: Stability

    /// Crash-free figures of an app.
    public struct Stability: Decodable, Sendable, Equatable {
        public let crashFreeUsers: Double
        public let issuesCount: Int

        enum CodingKeys: String, CodingKey {
            case crashFreeUsers = "crash_free_users"
            case issuesCount = "issues_count"
        }
    }
}

/// `{"data":{"apps":[...]}}`.
struct AppsPayload: Decodable {
    let apps: [App]
}

/// A crash issue of an app, from `GET /apps/{id}/issues`.
public struct AppIssue: Decodable, Sendable, Equatable {
    public let id: String
    public let title: String
    public let impactedUsers: Int

    enum CodingKeys: String, CodingKey {
        case id, title
        case impactedUsers = "impacted_users"
    }
}

/// `{"data":{"issues":[...]}}`.
struct IssuesPayload: Decodable {
    let issues: [AppIssue]
}
