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
    public static func underlyingChain(of error: any Error) -> [String] {
        var chain: [String] = []
        var current = underlying(of: error)
        while let next = current.first, chain.count < 8 {
            chain.append(of(next))
            current = underlying(of: next)
        }
        return chain
    }

    /// The identity computed without ``TraceableError``: enum case, URL error name, domain and code, or type.
    public static func reflectedIdentity(of error: any Error) -> String {
        let type = Swift.type(of: error)
        if let name = enumCaseName(error) {
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
        if let urlError = error as? URLError { return "URLError." + urlErrorName(urlError.code.rawValue) }
        if Mirror(reflecting: error).displayStyle == .enum, let label = Mirror(reflecting: error).children.first?.label {
            return typeName(of: error) + "." + label
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

    private struct CaseKey: Hashable {
        var type: ObjectIdentifier
        var name: UInt
    }

    private static let caseIdentities = Locked<[CaseKey: String]>([:])

    /// The type's name without the module, such as `APIClient.Failure` for a nested type.
    static func typeName(of error: any Error) -> String {
        let full = String(reflecting: Swift.type(of: error))
        guard let dot = full.firstIndex(of: "."), !full[..<dot].contains("<") else { return full }
        return String(full[full.index(after: dot)...])
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

/// The runtime's name for the case of an enum value, payload or not, ignoring any custom
/// description (what `print` uses); `nil` for values that are not enums. The pointer is to
/// static metadata and stays valid.
@_silgen_name("swift_EnumCaseName")
private func enumCaseName<T>(_ value: T) -> UnsafePointer<CChar>?
