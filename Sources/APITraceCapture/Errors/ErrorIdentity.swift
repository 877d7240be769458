import APITraceFormat
import Foundation

/// Stable, low-cardinality names for errors, as written in `identity`, `underlying` and a request's `error`.
///
/// - ``TraceableError`` adopters: their ``TraceableError/traceIdentity``.
/// - Swift enums: `Type.case` without associated values, such as `DecodingError.keyNotFound`.
/// - `URLError` and `NSURLErrorDomain` errors: `URLError.timedOut` and the other documented code names.
/// - Other `NSError`s: `domain#code`, such as `NSCocoaErrorDomain#4`.
/// - Anything else: the type name, such as `ValidationFailure`.
///
/// ```swift
/// ErrorIdentity.of(URLError(.timedOut))           // "URLError.timedOut"
/// ErrorIdentity.of(DecodingError.keyNotFound(...)) // "DecodingError.keyNotFound"
/// ```
public enum ErrorIdentity {
    /// The identity of `error`.
    public static func of(_ error: any Error) -> String {
        if let traceable = error as? any TraceableError { return traceable.traceIdentity }
        return reflectedIdentity(of: error)
    }

    /// Identities of the errors `error` wraps, outermost first, up to 8 deep: from
    /// ``TraceableError/underlyingErrors`` and from `NSUnderlyingErrorKey`.
    package static func underlyingChain(of error: any Error) -> [String] {
        var chain: [String] = []
        var current = underlying(of: error)
        while let next = current.first, chain.count < 8 {
            chain.append(of(next))
            current = underlying(of: next)
        }
        return chain
    }

    /// The identity computed without ``TraceableError``: enum case, URL error name, domain and code, or type.
    package static func reflectedIdentity(of error: any Error) -> String {
        let type = Swift.type(of: error)
        if let name = EnumCaseName.of(error) {
            // Enum identities are cached by type and case: the hot path of `recordError`.
            let key = CaseKey(type: ObjectIdentifier(type), name: UInt(bitPattern: name))
            if let cached = caseIdentities.withLock({ $0[key] }) { return cached }
            let identity = typeName(of: error) + "." + String(cString: name)
            caseIdentities.withLock { cache in
                if cache.count > 4096 { cache.removeAll() }
                cache[key] = identity
            }
            return identity
        }
        if let urlError = error as? URLError {
            if isLinuxOffline(urlError) { return "URLError.notConnectedToInternet" }
            return "URLError." + urlErrorName(urlError.code.rawValue)
        }
        let mirror = Mirror(reflecting: error)
        if mirror.displayStyle == .enum {
            // Only reached when the runtime's case-name function is missing (see `EnumCaseName`).
            if let label = mirror.children.first?.label { return typeName(of: error) + "." + label }
            let type = Swift.type(of: error) as Any.Type
            if !(type is any CustomStringConvertible.Type), !(type is any CustomDebugStringConvertible.Type) {
                let printed = String(describing: error)
                if printed.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) { return typeName(of: error) + "." + printed }
            }
        }
        if isNSError(error) {
            let ns = error as NSError
            if ns.domain == NSURLErrorDomain { return "URLError." + urlErrorName(ns.code) }
            return "\(ns.domain)#\(ns.code)"
        }
        if let custom = error as? any CustomNSError {
            return "\(Swift.type(of: custom).errorDomain)#\(custom.errorCode)"
        }
        return typeName(of: error)
    }

    /// The identity and message of an enum case that has no payload, no custom description and
    /// wraps nothing (not a `TraceableError` or `CustomNSError`); `nil` for any other error.
    ///
    /// Printing an enum case goes through the runtime's reflection, and each protocol cast costs a
    /// conformance lookup: most of the cost of a recorded error. For such a case both texts are a
    /// function of the case alone, so they are computed once per type and case.
    static func plainCase(_ error: any Error) -> (identity: String, message: String)? {
        guard let name = EnumCaseName.of(error) else { return nil }
        let type = Swift.type(of: error) as Any.Type
        let key = CaseKey(type: ObjectIdentifier(type), name: UInt(bitPattern: name))
        if let cached = plainCases.withLock({ $0[key] }) { return cached }
        let plain = !(error is any TraceableError) && !(error is any CustomNSError)
            && !(type is any CustomStringConvertible.Type) && !(type is any CustomDebugStringConvertible.Type)
            && !(type is any TextOutputStreamable.Type) && Mirror(reflecting: error).children.isEmpty
        guard plain else { return nil }
        let described = (identity: of(error), message: String(describing: error))
        plainCases.withLock { cache in
            if cache.count > 4096 { cache.removeAll() }
            cache[key] = described
        }
        return described
    }

    private static let plainCases = Locked<[CaseKey: (identity: String, message: String)]>([:])

    private struct CaseKey: Hashable {
        var type: ObjectIdentifier
        var name: UInt
    }

    private static let caseIdentities = Locked<[CaseKey: String]>([:])

    /// The type's name without the module, such as `APIClient.Failure` for a nested type.
    static func typeName(of error: any Error) -> String {
        var full = String(reflecting: Swift.type(of: error))
        // Types declared inside a function print as `(unknown context at $55c9544d8770)`: an address
        // that changes per run would make a new identity per run.
        while let start = full.range(of: "(unknown context at $"), let end = full[start.upperBound...].firstIndex(of: ")") {
            var after = full.index(after: end)
            if after < full.endIndex, full[after] == "." { after = full.index(after: after) }
            full.removeSubrange(start.lowerBound..<after)
        }
        guard let dot = full.firstIndex(of: "."), !full[..<dot].contains("<") else { return full }
        return String(full[full.index(after: dot)...])
    }

    /// Whether `error` is how Linux's FoundationNetworking reports a device without a network.
    ///
    /// Where Apple platforms say `notConnectedToInternet`, libcurl under FoundationNetworking fails
    /// the connect with "Couldn't connect to server" and the code `unknown` (-1), seen with no
    /// route and with the interface down; a refused connection is `cannotConnectToHost` and a
    /// timeout `timedOut`. Both forms get the same identity.
    static func isLinuxOffline(_ error: URLError) -> Bool {
        guard error.code.rawValue == -1 else { return false }
        let description = (error as NSError).userInfo[NSLocalizedDescriptionKey] as? String ?? error.localizedDescription
        return description.hasSuffix("Couldn't connect to server")
    }

    private static func isNSError(_ error: any Error) -> Bool {
        Swift.type(of: error) is NSError.Type
    }

    private static func underlying(of error: any Error) -> [any Error] {
        if let traceable = error as? any TraceableError {
            let wrapped = traceable.underlyingErrors
            if !wrapped.isEmpty { return wrapped }
        }
        if error is URLError || isNSError(error) || error is any CustomNSError {
            if let inner = (error as NSError).userInfo[NSUnderlyingErrorKey] as? any Error { return [inner] }
        }
        return []
    }
}

