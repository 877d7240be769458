#if os(Linux)
import Glibc
#endif

extension GzipDeflater {
    /// Compresses a whole buffer into one finished gzip member, with libdeflate when the system has
    /// it (Linux: `libdeflate.so.0`, Debian's `libdeflate0`), with zlib otherwise.
    ///
    /// For bodies made whole before they are sent (OTLP requests): libdeflate compresses a buffer in
    /// one call and, at level 1 on the OTLP export's protobuf bodies, took half the CPU of zlib's
    /// level 1 for 1% fewer bytes (Docs/otlp.md). It is loaded at run time, so building apitrace
    /// still needs zlib alone, and a machine without it compresses as before. Both write standard
    /// gzip (RFC 1952), which any receiver inflates alike.
    ///
    /// `APITRACE_GZIP=zlib` in the environment keeps zlib (to compare the two, or to rule one out).
    /// Safe to call from any thread.
    package static func compressWhole(_ input: [UInt8], level: Int32) throws(GzipError) -> [UInt8] {
        if level >= 1, let compressed = LibDeflate.shared?.gzip(input, level: level) { return compressed }
        return try compress(input, level: level)
    }
}

/// libdeflate's one-shot gzip compressor, found with `dlopen` (nil where it is not installed, and
/// on Apple platforms, where apps ship no such library).
package final class LibDeflate: @unchecked Sendable {
    /// The library, when it is there and `APITRACE_GZIP` does not say `zlib`.
    package static let shared: LibDeflate? = {
        #if os(Linux)
        if let choice = getenv("APITRACE_GZIP"), String(cString: choice) == "zlib" { return nil }
        return LibDeflate(library: "libdeflate.so.0")
        #else
        return nil
        #endif
    }()

    private typealias Allocate = @convention(c) (Int32) -> OpaquePointer?
    private typealias Compress = @convention(c) (OpaquePointer?, UnsafeRawPointer?, Int, UnsafeMutableRawPointer?, Int) -> Int
    private typealias Bound = @convention(c) (OpaquePointer?, Int) -> Int
    private typealias FreeCompressor = @convention(c) (OpaquePointer?) -> Void

    private let allocate: Allocate
    private let compress: Compress
    private let bound: Bound
    private let freeCompressor: FreeCompressor
    /// Compressors not in use, by level. A compressor is a few hundred KiB of tables, so they are
    /// kept rather than allocated per body, and reused one call at a time: at most as many as calls
    /// ran at once. (Measured: no change in the export's time either way on the bench; kept because
    /// the collector's forwarding gzips many small bodies.)
    private let idle = Locked([Int32: [OpaquePointer]]())

    /// Loads `library` (a name the dynamic linker looks up in the system's library folders); nil
    /// when it cannot be loaded or lacks one of the four functions used.
    package init?(library: String) {
        #if os(Linux)
        guard let handle = dlopen(library, RTLD_NOW | RTLD_LOCAL) else { return nil }
        func symbol<T>(_ name: String, as type: T.Type) -> T? {
            dlsym(handle, name).map { unsafeBitCast($0, to: type) }
        }
        guard let allocate = symbol("libdeflate_alloc_compressor", as: Allocate.self),
              let compress = symbol("libdeflate_gzip_compress", as: Compress.self),
              let bound = symbol("libdeflate_gzip_compress_bound", as: Bound.self),
              let freeCompressor = symbol("libdeflate_free_compressor", as: FreeCompressor.self) else {
            dlclose(handle)
            return nil
        }
        // The handle stays open for the life of the process.
        self.allocate = allocate
        self.compress = compress
        self.bound = bound
        self.freeCompressor = freeCompressor
        #else
        return nil
        #endif
    }

    deinit {
        idle.withLock { idle in
            for compressor in idle.values.joined() { freeCompressor(compressor) }
        }
    }

    /// `input` as one gzip member at `level` (1 to 12; higher is smaller and slower, as in zlib), or nil
    /// when libdeflate could not allocate a compressor.
    package func gzip(_ input: [UInt8], level: Int32) -> [UInt8]? {
        let level = max(1, min(12, level))
        guard let compressor = idle.withLock({ $0[level]?.popLast() }) ?? allocate(level) else { return nil }
        defer { idle.withLock { $0[level, default: []].append(compressor) } }
        let capacity = bound(compressor, input.count)
        let output = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
            count = input.withUnsafeBytes { compress(compressor, $0.baseAddress, $0.count, buffer.baseAddress, capacity) }
        }
        // 0: the output did not fit the bound, which libdeflate rules out; zlib then.
        return output.isEmpty ? nil : output
    }
}
