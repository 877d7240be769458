#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

/// The case name of an enum value, even with a payload or a custom description.
///
/// Swift has no public API for it; the runtime's `swift_EnumCaseName` (what `print` uses) is looked
/// up by name at run time instead of being linked, so a runtime without it costs precision, not a
/// crash or a link error. When it is absent, ``ErrorIdentity`` falls back to `Mirror` (the case
/// label of an enum with a payload) and to the printed value of a case without payload and without
/// a custom description; other cases are identified by their type alone.
enum EnumCaseName {
    /// `const char *swift_EnumCaseName(OpaqueValue *value, const Metadata *type)`; for two pointer
    /// arguments and a pointer result the Swift and C calling conventions agree.
    typealias Function = @convention(c) (UnsafeRawPointer, UnsafeRawPointer) -> UnsafePointer<CChar>?

    private static let function: Function? = {
        #if canImport(Darwin)
        let handle = UnsafeMutableRawPointer(bitPattern: -2)  // RTLD_DEFAULT
        #elseif canImport(Glibc) || canImport(Musl) || canImport(Android)
        let handle = dlopen(nil, RTLD_NOW)
        #else
        let handle: UnsafeMutableRawPointer? = nil
        #endif
        #if canImport(Darwin) || canImport(Glibc) || canImport(Musl) || canImport(Android)
        guard let symbol = dlsym(handle, "swift_EnumCaseName") else { return nil }
        return unsafeBitCast(symbol, to: Function.self)
        #else
        return nil
        #endif
    }()

    /// Whether the runtime function was found; `false` means the documented fallback is in use.
    static var isAvailable: Bool { function != nil }

    /// The case name of `value` when it is an enum, `nil` otherwise or when the function is absent.
    /// The pointer is to static metadata and stays valid.
    static func of(_ value: any Error) -> UnsafePointer<CChar>? {
        guard let function else { return nil }
        // Through a protocol extension, so the metadata is the concrete type's, not the existential's.
        return value.enumCaseName(function)
    }

    fileprivate static func name<T>(_ value: T, _ function: Function) -> UnsafePointer<CChar>? {
        guard !(T.self is AnyClass) else { return nil }
        var copy = value
        let metadata = unsafeBitCast(T.self as Any.Type, to: UnsafeRawPointer.self)
        return withUnsafePointer(to: &copy) { function(UnsafeRawPointer($0), metadata) }
    }
}

extension Error {
    /// Opens the existential: inside, `Self` is the concrete error type.
    fileprivate func enumCaseName(_ function: @convention(c) (UnsafeRawPointer, UnsafeRawPointer) -> UnsafePointer<CChar>?) -> UnsafePointer<CChar>? {
        EnumCaseName.name(self, function)
    }
}
