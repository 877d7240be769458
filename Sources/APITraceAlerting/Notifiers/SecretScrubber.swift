import APITraceFormat
import Foundation

/// Scrubs a notifier's secrets and every control character out of text before it leaves
/// `apitrace` (standard error and output, the state's `lastError`, `--dry-run`).
///
/// A receiver's answer is whatever the peer chose to send: it may echo the Slack URL's path, the
/// routing key, URL-encoded, upper-cased, cut in half or wrapped in JSON escapes, and it may carry
/// terminal escape sequences. So the scrubber does not look for the secret only as written:
/// - each secret (at least 4 characters) is replaced wherever it occurs, ignoring case;
/// - any word that shares 8 consecutive characters with a secret (ignoring case) is replaced whole,
///   which catches a key cut by a length limit, embedded in a longer token or split by `\/`;
/// - when the text was cut, its last word is dropped (it may be the head of a secret);
/// - control characters (C0, DEL, C1, line separators, bidirectional overrides) become spaces.
///
/// The secrets of a notifier are the values of the environment variables it names, and of any URL
/// (from the environment or the rules file) its userinfo, its path segments that look like tokens
/// (all of them for Slack) and its query values.
package struct SecretScrubber: Sendable {
    /// What a secret is replaced with.
    package static let mark = "<redacted>"
    /// Shared runs this long make a word secret.
    static let gram = 8

    private var exact: [String] = []
    private var grams: Set<String> = []

    /// A scrubber for these secrets; values shorter than 4 characters are ignored. `whole` are
    /// replaced only where they occur entire (a URL, whose host and scheme are no secret).
    package init(secrets: [String], whole: [String] = []) {
        for secret in secrets { add(secret) }
        for secret in whole { add(secret, pieces: false) }
        exact.sort { $0.count > $1.count }
    }

    /// The scrubber of a notifier's secrets, read from `environment`.
    package init(notifier: NotifierConfiguration, environment: [String: String]) {
        var secrets: [String] = [], whole: [String] = []
        for variable in [notifier.urlEnvironmentVariable, notifier.routingKeyEnvironmentVariable].compactMap({ $0 }) {
            guard let value = environment[variable], !value.isEmpty else { continue }
            if let url = URLComponents(string: value), url.scheme != nil, url.host != nil {
                whole.append(value)
                secrets += Self.urlSecrets(url, allPathSegments: true)
            } else {
                secrets.append(value)
            }
        }
        if let text = notifier.url, let url = URLComponents(string: text) {
            secrets += Self.urlSecrets(url, allPathSegments: notifier.kind == .slack)
        }
        self.init(secrets: secrets, whole: whole)
    }

    /// Userinfo, secret path segments and query values of a URL.
    static func urlSecrets(_ url: URLComponents, allPathSegments: Bool) -> [String] {
        var out = [url.user, url.password, url.percentEncodedUser, url.percentEncodedPassword].compactMap { $0 }
        out += url.path.split(separator: "/").map(String.init).filter { isSecretSegment($0, inSecretURL: allPathSegments) }
        out += (url.queryItems ?? []).compactMap(\.value)
        if let query = url.percentEncodedQuery { out.append(query) }
        return out
    }

    /// Path words that are never credentials.
    static let plainSegments: Set<String> = [
        "services", "service", "hooks", "hook", "webhook", "webhooks", "api", "slack", "alerts", "alert",
        "events", "event", "enqueue", "notify", "incoming", "v1", "v2", "v3", "integrations", "workflows", "triggers",
    ]

    /// Whether a path segment is (probably) a credential: in a URL that is itself a secret (from the
    /// environment, or any Slack webhook), every segment but the common path words; in a URL written
    /// in the rules file, segments that look like tokens.
    static func isSecretSegment(_ segment: String, inSecretURL: Bool) -> Bool {
        if inSecretURL { return segment.count >= 4 && !plainSegments.contains(segment.lowercased()) }
        return looksLikeToken(segment)
    }

    /// A path segment that is probably a credential rather than a name: long, or mixing letters and digits.
    static func looksLikeToken(_ segment: String) -> Bool {
        if segment.count >= 16 { return true }
        let letters = segment.contains { $0.isLetter }, digits = segment.contains { $0.isNumber }
        return segment.count >= 8 && letters && digits
    }

    private mutating func add(_ secret: String, pieces: Bool = true) {
        var variants = [secret, secret.replacingOccurrences(of: "/", with: "\\/")]
        if let decoded = secret.removingPercentEncoding { variants.append(decoded) }
        if let encoded = secret.addingPercentEncoding(withAllowedCharacters: .alphanumerics) { variants.append(encoded) }
        for variant in variants where variant.count >= 4 && !exact.contains(variant.lowercased()) {
            exact.append(variant.lowercased())
        }
        for variant in [secret] + (secret.removingPercentEncoding.map { [$0] } ?? []) where pieces {
            let scalars = Array(variant.lowercased().unicodeScalars)
            guard scalars.count >= Self.gram else { continue }
            for start in 0...(scalars.count - Self.gram) {
                var gram = String.UnicodeScalarView()
                gram.append(contentsOf: scalars[start..<(start + Self.gram)])
                if gram.allSatisfy(Self.isWordScalar) { grams.insert(String(gram)) }  // a word never holds anything else
            }
        }
    }

    /// Whether there is anything to scrub besides control characters.
    package var isEmpty: Bool { exact.isEmpty }

    /// `text` without secrets, on one line; `truncated` says the text was cut (its last word may be a secret's head).
    package func scrub(_ text: String, truncated: Bool = false) -> String {
        var out = Self.oneLine(text)
        for secret in exact where out.range(of: secret, options: .caseInsensitive) != nil {
            out = out.replacingOccurrences(of: secret, with: Self.mark, options: .caseInsensitive)
        }
        if !grams.isEmpty { out = scrubWords(out) }
        if truncated, let cut = out.unicodeScalars.lastIndex(where: { !Self.isWordScalar($0) }) {
            out = String(out.unicodeScalars[...cut]) + "…"
        } else if truncated {
            out = "…"
        }
        return out
    }

    /// Replaces every word holding 8 characters of a secret.
    private func scrubWords(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        var word: [Unicode.Scalar] = []
        func flush() {
            if word.count >= Self.gram, containsSecretGram(word) {
                out.append(contentsOf: Self.mark.unicodeScalars)
            } else {
                out.append(contentsOf: word)
            }
            word.removeAll(keepingCapacity: true)
        }
        for c in text.unicodeScalars {
            if Self.isWordScalar(c) { word.append(c) } else {
                flush()
                out.append(c)
            }
        }
        flush()
        return String(out)
    }

    private func containsSecretGram(_ word: [Unicode.Scalar]) -> Bool {
        let lower = Array(String(String.UnicodeScalarView(word)).lowercased().unicodeScalars)
        guard lower.count >= Self.gram else { return false }
        for start in 0...(lower.count - Self.gram) {
            var gram = String.UnicodeScalarView()
            gram.append(contentsOf: lower[start..<(start + Self.gram)])
            if grams.contains(String(gram)) { return true }
        }
        return false
    }

    /// Letters, digits and the characters tokens are made of; anything else separates words.
    static func isWordScalar(_ c: Unicode.Scalar) -> Bool {
        switch c {
        case "a"..."z", "A"..."Z", "0"..."9", "-", "_", ".", "~", "+", "%", "=", "*", "!", "$": return true
        default: return c.value > 0x7F && !TextEscaping.isControl(c) && !isInvisible(c)
        }
    }

    /// Text on one line with no control characters, bidirectional overrides or zero-width
    /// characters: what a receiver sent cannot move the cursor, recolour or reorder a terminal.
    package static func oneLine(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { TextEscaping.isControl($0) || isInvisible($0) }) else { return text }
        var out = String.UnicodeScalarView()
        for c in text.unicodeScalars { out.append(TextEscaping.isControl(c) || isInvisible(c) ? " " : c) }
        return String(out)
    }

    /// Bidirectional embeddings, overrides and isolates, zero-width characters and the BOM.
    static func isInvisible(_ c: Unicode.Scalar) -> Bool {
        (0x200B...0x200F).contains(c.value) || (0x202A...0x202E).contains(c.value) || (0x2066...0x2069).contains(c.value) || c.value == 0xFEFF
    }
}
