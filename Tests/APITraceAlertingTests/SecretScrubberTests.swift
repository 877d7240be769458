@testable import APITraceAlerting
import Foundation
import Testing

/// The scrubber every text about a delivery goes through, against the echoes a hostile receiver can make.
@Suite struct SecretScrubberTests {
    static let key = "R0UTINGKEY-abc123-secret"
    static let slack = "https://hooks.slack.com/services/T07ABCD12/B07EFGH34/xoxbQ7hT2mZ9pL4kW8vN"

    static let scrubber = SecretScrubber(
        notifier: NotifierConfiguration(name: "n", kind: .slack, urlEnvironmentVariable: "SLACK_URL", routingKeyEnvironmentVariable: "KEY"),
        environment: ["SLACK_URL": slack, "KEY": key, "OTHER": "not-this-one"])

    /// Each 8-character window of each secret, checked independently of the scrubber's own matching.
    static func windows(_ secrets: [String]) -> [String] {
        secrets.flatMap { s in
            let a = Array(s.lowercased())
            return a.count < 8 ? [String(a)] : (0...(a.count - 8)).map { String(a[$0..<($0 + 8)]) }
        }
    }

    static let secretPieces = windows([key, "xoxbQ7hT2mZ9pL4kW8vN", "T07ABCD12", "B07EFGH34"])

    @Test(arguments: [
        "invalid key \(key)",
        "invalid key \(key.uppercased())",
        "key=\(key.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)",
        "no such hook \(slack)",
        "no such hook \(slack.replacingOccurrences(of: "/", with: "\\/"))",
        "path /services/T07ABCD12/B07EFGH34/xoxbQ7hT2mZ9pL4kW8vN",
        "half a key: \(key.prefix(12)) and the tail \(key.suffix(12))",
        "embedded xx\(key)yy and {\"routing_key\":\"\(key)\"}",
        "token XOXBQ7HT2MZ9PL4KW8VN!",
    ])
    func anEchoedSecretInAnyShapeIsReplaced(_ text: String) {
        let out = Self.scrubber.scrub(text)
        let leaked = Self.secretPieces.filter { out.lowercased().contains($0) }
        #expect(leaked.isEmpty, "\(out) still holds \(leaked)")
        #expect(out.contains(SecretScrubber.mark))
    }

    @Test func aTextCutInsideASecretLosesItsLastWord() {
        // A quote cut 5 characters into the key: too short to recognise, so the cut word goes.
        let out = Self.scrubber.scrub("error for R0UTI", truncated: true)
        #expect(!out.contains("R0UTI") && out.hasPrefix("error for"))
    }

    @Test func plainTextStaysAsItWas() {
        let text = "HTTP 500 from $SLACK_URL: internal error (retry later); not-this-one stays"
        #expect(Self.scrubber.scrub(text) == text)
    }

    @Test(arguments: ["\u{1B}[31mred\u{1B}[0m", "a\rb", "bell\u{07}", "csi\u{9B}2J", "bidi\u{202E}txt", "line\u{2028}sep", "nul\u{0}", "del\u{7F}"])
    func controlCharactersNeverSurvive(_ text: String) {
        let out = SecretScrubber(secrets: []).scrub(text)
        #expect(!out.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || [0x202E, 0x2028].contains($0.value) })
    }

    @Test func userinfoAndTokenLikeSegmentsOfARulesFileURLAreSecretsAndHiddenFromItsDisplay() {
        let notifier = NotifierConfiguration(name: "h", kind: .webhook, url: "https://admin:pw-s3cretPass@example.com/hooks/a1b2c3d4e5f6?token=qwertyuiop")
        let scrubber = SecretScrubber(notifier: notifier, environment: [:])
        let out = scrubber.scrub("denied for admin:pw-s3cretPass at /hooks/a1b2c3d4e5f6?token=qwertyuiop")
        for piece in ["pw-s3cretPass", "a1b2c3d4e5f6", "qwertyuiop"] { #expect(!out.contains(piece), "\(out)") }
        #expect(NotifierConfiguration.displayURL(notifier.url!, kind: .webhook) == "https://<redacted>@example.com/hooks/<redacted>?<redacted>")
        #expect(NotifierConfiguration.displayURL("http://127.0.0.1:8080/hook", kind: .webhook) == "http://127.0.0.1:8080/hook")
        #expect(NotifierConfiguration.displayURL(Self.slack, kind: .slack) == "https://hooks.slack.com/services/<redacted>/<redacted>/<redacted>")
    }

    @Test(arguments: [
        ("http://am:9093", "http://am:9093/api/v2/alerts"),
        ("http://am:9093/", "http://am:9093/api/v2/alerts"),
        ("http://am:9093/ok?x=1", "http://am:9093/ok/api/v2/alerts?x=1"),
        ("http://am:9093/ok/?x=1&y=2", "http://am:9093/ok/api/v2/alerts?x=1&y=2"),
        ("http://am:9093/api/v2/alerts?x=1", "http://am:9093/api/v2/alerts?x=1"),
    ])
    func theAlertmanagerEndpointGoesBeforeTheQuery(_ base: String, _ expected: String) {
        #expect(NotifierConfiguration.alertmanagerAlertsURL(base) == expected)
    }
}
