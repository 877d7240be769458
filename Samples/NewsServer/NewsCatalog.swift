import Foundation

/// The fixed content the sample server serves: newspapers, news and Fabric-like apps.
enum NewsCatalog {
    static func newspapers() -> [[String: Any]] {
        (1...5).map { id in
            ["id": id, "name": "The Daily \(["Otec", "Swift", "Linux", "Server", "Client"][id - 1])", "language": id % 2 == 0 ? "es" : "en"]
        }
    }

    static func news(id: Int) -> [String: Any] {
        ["id": id, "newspaper_id": 1 + id % 5, "title": "Story number \(id)", "body": "Body of story \(id).",
         "published_at": "2026-11-22T10:\(String(format: "%02d", id % 60)):00Z"]
    }

    static func app(id: Int, withStability: Bool) -> [String: Any] {
        var app: [String: Any] = [
            "id": "\(id)", "name": "App \(id)", "bundle_identifier": "com.example.app\(id)", "platform": id % 2 == 0 ? "android" : "ios",
            "latest_build": ["version": "2.\(id).0", "build": 100 + id],
        ]
        if withStability {
            app["stability"] = ["crash_free_users": 0.99 - Double(id) / 1000, "crash_free_sessions": 0.995, "issues_count": id * 3]
        }
        return app
    }

    static func issue(app: Int, number: Int) -> [String: Any] {
        ["id": "\(app)-\(number)", "title": "Crash in FeedViewController line \(number * 7)", "impacted_users": number * 11, "state": number % 3 == 0 ? "closed" : "open"]
    }
}
