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
        if let urlError = error as? URLError { return "URLError." + urlErrorName(urlError.code.rawValue) }
        let type = typeName(of: error)
        if Mirror(reflecting: error).displayStyle == .enum, let name = caseName(of: error) {
            return type + "." + name
        }
        if isNSError(error) {
            let ns = error as NSError
            if ns.domain == NSURLErrorDomain { return "URLError." + urlErrorName(ns.code) }
            return "\(ns.domain)#\(ns.code)"
        }
        if let custom = error as? any CustomNSError {
            return "\(Swift.type(of: custom).errorDomain)#\(custom.errorCode)"
        }
        return type
    }

    /// The type's name without the module, such as `APIClient.Failure` for a nested type.
    static func typeName(of error: any Error) -> String {
        let full = String(reflecting: Swift.type(of: error))
        guard let dot = full.firstIndex(of: "."), !full[..<dot].contains("<") else { return full }
        return String(full[full.index(after: dot)...])
    }

    /// The case name of an enum value, without associated values, ignoring any custom description.
    static func caseName(of value: any Error) -> String? {
        if let label = Mirror(reflecting: value).children.first?.label { return label }
        guard let pointer = enumCaseName(value) else { return nil }
        return String(cString: pointer)
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

/// The runtime's name for the case of an enum value without payload (what `print` uses).
@_silgen_name("swift_EnumCaseName")
private func enumCaseName<T>(_ value: T) -> UnsafePointer<CChar>?
