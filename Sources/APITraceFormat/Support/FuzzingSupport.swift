/// What the fuzz targets (Fuzz/, a package of their own that cannot see `package` declarations)
/// need from this module, behind an SPI so apps never see it: `@_spi(Fuzzing) import APITraceFormat`.
@_spi(Fuzzing) public enum FuzzingSupport {
    /// `bytes` as one gzip member (zlib level 6).
    public static func gzip(_ bytes: [UInt8]) throws -> [UInt8] {
        try GzipDeflater.compress(bytes)
    }
}
