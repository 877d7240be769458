#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What `stat` says of a file, read the same way on Linux and Apple platforms
/// (the modification time field is named differently on each).
package struct FileStatus: Sendable, Equatable {
    /// Size in bytes.
    package var size: Int64
    /// Modification time, nanoseconds since 1970.
    package var modifiedNanoseconds: Int64
    /// Inode number, so a file replaced under the same name and size is told apart.
    package var inode: UInt64

    /// Modification time, milliseconds since 1970.
    package var modifiedMilliseconds: Int64 { modifiedNanoseconds / 1_000_000 }

    /// Modification time, seconds since 1970.
    package var modifiedSeconds: Double { Double(modifiedNanoseconds) / 1e9 }

    /// A status as recorded earlier (a cache entry's key).
    package init(size: Int64, modifiedNanoseconds: Int64, inode: UInt64) {
        self.size = size
        self.modifiedNanoseconds = modifiedNanoseconds
        self.inode = inode
    }

    /// The status of `path`, or nil when it cannot be read.
    package init?(path: String) {
        var info = stat()
        guard FileSystemPath.withBytes(of: path, { stat($0, &info) }) == 0 else { return nil }
        #if canImport(Darwin)
        let time = info.st_mtimespec
        #else
        let time = info.st_mtim
        #endif
        size = Int64(info.st_size)
        modifiedNanoseconds = Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
        inode = UInt64(info.st_ino)
    }
}
