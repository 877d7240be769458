extension Redaction {
    /// Text with secrets replaced: values of sensitive `name=value` pairs, sensitive header lines
    /// (`Authorization: Bearer abc`), `Bearer`/`Basic` credentials and URL user info (`https://u:p@host`).
    ///
    /// ```swift
    /// Redaction().redactText("https://me:pw@api.example.com/a?api_key=1&page=2")
    /// // "https://[REDACTED]@api.example.com/a?api_key=[REDACTED]&page=2"
    /// ```
    public func redactText(_ text: String) -> String {
        // Most text holds none of the bytes a secret's marker starts with: skip the copy.
        guard text.utf8.contains(where: Self.mayStartSecret) else { return text }
        let input = Array(text.utf8)
        let hidden = Array(replacement.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(input.count + 16)
        var changed = false
        var i = 0
        let n = input.count
        while i < n {
            let c = input[i]
            switch c {
            case UInt8(ascii: "="):
                if isSensitiveParameter(nameBefore(out)) {
                    out.append(c)
                    out.append(contentsOf: hidden)
                    i += 1
                    while i < n, !Self.endsValue(input[i]) { i += 1 }
                    changed = true
                    continue
                }
            case UInt8(ascii: ":"):
                let name = nameBefore(out)
                if !name.isEmpty, isSensitiveLabel(name), i + 1 < n, input[i + 1] == UInt8(ascii: " ") || input[i + 1] == UInt8(ascii: "\t") {
                    out.append(c)
                    out.append(UInt8(ascii: " "))
                    out.append(contentsOf: hidden)
                    i += 1
                    while i < n, !Self.endsHeaderValue(input[i]) { i += 1 }
                    changed = true
                    continue
                }
                // A quoted label, as JSON and Swift's dictionary printing write them: `"X-Api-Key": "sk_live..."`.
                if let quoted = quotedNameBefore(out), isSensitiveLabel(quoted) {
                    out.append(c)
                    i += 1
                    while i < n, input[i] == UInt8(ascii: " ") || input[i] == UInt8(ascii: "\t") {
                        out.append(input[i])
                        i += 1
                    }
                    if i < n, input[i] == UInt8(ascii: "\"") || input[i] == UInt8(ascii: "'") {
                        let quote = input[i]
                        out.append(quote)
                        out.append(contentsOf: hidden)
                        i += 1
                        while i < n, input[i] != quote {
                            if input[i] == UInt8(ascii: "\\") { i += 1 }
                            i += 1
                        }
                    } else {
                        out.append(contentsOf: hidden)
                        while i < n, !Self.endsValue(input[i]) { i += 1 }
                    }
                    changed = true
                    continue
                }
            case UInt8(ascii: "@"):
                if let start = userInfoStart(out) {
                    out.removeSubrange(start...)
                    out.append(contentsOf: hidden)
                    changed = true
                }
            case UInt8(ascii: "B"), UInt8(ascii: "b"):
                if let scheme = credentialScheme(input, at: i, after: out) {
                    out.append(contentsOf: input[i..<(i + scheme)])
                    out.append(contentsOf: hidden)
                    i += scheme
                    while i < n, !Self.endsValue(input[i]) { i += 1 }
                    changed = true
                    continue
                }
            default:
                break
            }
            out.append(c)
            i += 1
        }
        return changed ? String(decoding: out, as: UTF8.self) : text
    }

    /// The run of name characters at the end of `out`.
    private func nameBefore(_ out: [UInt8]) -> String {
        var j = out.count
        while j > 0, Self.isNameByte(out[j - 1]) { j -= 1 }
        guard j < out.count else { return "" }
        return String(decoding: out[j...], as: UTF8.self)
    }

    /// The name inside the quotes `out` ends with (`"X-Api-Key"` or `'token'`), if it does.
    private func quotedNameBefore(_ out: [UInt8]) -> String? {
        guard let quote = out.last, quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else { return nil }
        var j = out.count - 1
        while j > 0, Self.isNameByte(out[j - 1]) { j -= 1 }
        guard j > 0, j < out.count - 1, out[j - 1] == quote else { return nil }
        return String(decoding: out[j..<(out.count - 1)], as: UTF8.self)
    }

    /// Where user info starts when `out` ends inside `scheme://user:pass`.
    private func userInfoStart(_ out: [UInt8]) -> Int? {
        var j = out.count
        while j > 0 {
            let b = out[j - 1]
            if b == UInt8(ascii: "/") {
                return j >= 3 && out[j - 2] == UInt8(ascii: "/") && out[j - 3] == UInt8(ascii: ":") && j < out.count ? j : nil
            }
            if Self.endsValue(b) { return nil }
            j -= 1
        }
        return nil
    }

    /// Length of `Bearer ` or `Basic ` at `i` when it starts a word; `nil` otherwise.
    private func credentialScheme(_ input: [UInt8], at i: Int, after out: [UInt8]) -> Int? {
        if let last = out.last, Self.isNameByte(last) { return nil }
        for scheme in ["bearer ", "basic "] {
            let bytes = Array(scheme.utf8)
            guard i + bytes.count < input.count else { continue }
            var match = true
            for k in 0..<bytes.count where (input[i + k] | 0x20) != bytes[k] && !(bytes[k] == 0x20 && input[i + k] == 0x20) {
                match = false
                break
            }
            if match, !Self.endsValue(input[i + bytes.count]) { return bytes.count }
        }
        return nil
    }

    /// `=`, `:` (also after a quoted label), `@` and `B`/`b` (Bearer, Basic) start every rule above.
    static func mayStartSecret(_ b: UInt8) -> Bool {
        b == UInt8(ascii: "=") || b == UInt8(ascii: ":") || b == UInt8(ascii: "@") || b == UInt8(ascii: "B") || b == UInt8(ascii: "b")
    }

    static func isNameByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
            || b == UInt8(ascii: "_") || b == UInt8(ascii: "-") || b == UInt8(ascii: ".") || b == UInt8(ascii: "[") || b == UInt8(ascii: "]")
    }

    static func endsValue(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "&"), UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"),
             UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: ")"),
             UInt8(ascii: "}"), UInt8(ascii: "]"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "#"):
            true
        default:
            false
        }
    }

    static func endsHeaderValue(_ b: UInt8) -> Bool {
        b == UInt8(ascii: "\n") || b == UInt8(ascii: "\r") || b == UInt8(ascii: "\"") || b == UInt8(ascii: ",") || b == UInt8(ascii: "}")
    }
}
