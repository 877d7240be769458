import Crypto

/// Checks `Authorization: Bearer <token>` against the configured tokens in constant time.
///
/// Both sides are hashed with SHA-256 first, so the comparison always covers 32 bytes whatever
/// the lengths, and every configured token is compared (no early exit) so the time taken says
/// nothing about which token, or which prefix of it, matched.
struct BearerTokenCheck: Sendable {
    private let digests: [[UInt8]]

    /// Fails when `tokens` is empty or holds an empty token: a collector never runs open by accident.
    init(tokens: [String]) throws(CollectorSetupError) {
        let usable = tokens.filter { !$0.isEmpty }
        guard !usable.isEmpty, usable.count == tokens.count else {
            throw CollectorSetupError("no token configured: give the collector at least one non-empty token (--token-file or --token-env)")
        }
        digests = usable.map { Array(SHA256.hash(data: Array($0.utf8))) }
    }

    enum Outcome: Equatable {
        case accepted
        case missing
        case invalid
    }

    /// Checks the value of an `Authorization` header.
    func check(authorization: String?) -> Outcome {
        guard let authorization else { return .missing }
        let prefix = "bearer "
        guard authorization.count > prefix.count, authorization.prefix(prefix.count).lowercased() == prefix else {
            return .missing
        }
        let presented = String(authorization.dropFirst(prefix.count)).trimmingCharacters(in: " ")
        let digest = Array(SHA256.hash(data: Array(presented.utf8)))
        var matched: UInt8 = 0
        for expected in digests {
            var difference: UInt8 = 0
            for i in 0..<32 { difference |= expected[i] ^ digest[i] }
            matched |= difference == 0 ? 1 : 0
        }
        return matched == 1 ? .accepted : .invalid
    }
}

extension String {
    fileprivate func trimmingCharacters(in character: Character) -> String {
        var s = Substring(self)
        while s.first == character { s = s.dropFirst() }
        while s.last == character { s = s.dropLast() }
        return String(s)
    }
}
