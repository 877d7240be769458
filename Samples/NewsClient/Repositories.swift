/// Newspapers and their news, Jayme-style: a repository names its endpoints.
public struct NewspapersRepository: Sendable {
    let api: NewsAPI
    public init(api: NewsAPI) { self.api = api }

    /// `GET /newspapers`.
    public func all() async throws -> [Newspaper] {
        try await api.get("/newspapers", route: "/newspapers")
    }

    /// `GET /newspapers/{id}/news`.
    public func news(of newspaper: Int) async throws -> [News] {
        try await api.get("/newspapers/\(newspaper)/news", route: "/newspapers/{id}/news")
    }
}

/// Single news items.
public struct NewsRepository: Sendable {
    let api: NewsAPI
    public init(api: NewsAPI) { self.api = api }

    /// `GET /news/{id}`.
    public func read(id: Int) async throws -> News {
        try await api.get("/news/\(id)", route: "/news/{id}")
    }
}

/// Fabric-like apps and their crash issues.
public struct AppsRepository: Sendable {
    let api: NewsAPI
    public init(api: NewsAPI) { self.api = api }

    /// `GET /apps`: fails to decode when an app lacks `stability`.
    public func all() async throws -> [App] {
        try await api.get("/apps", route: "/apps", as: AppsPayload.self).apps
    }

    /// `GET /apps/{id}/issues`.
    public func issues(of app: String) async throws -> [AppIssue] {
        try await api.get("/apps/\(app)/issues", route: "/apps/{id}/issues", as: IssuesPayload.self).issues
    }
}
