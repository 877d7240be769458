import Foundation

/// A wait that ran out of time, naming what was waited for.
public struct TimedOut: Error, CustomStringConvertible {
    public let description: String
    public init(description: String) { self.description = description }
}

/// Polls `condition` every 20 ms until it holds; throws after `seconds` (generous: the machine is shared).
public func waitUntil(_ what: String, seconds: Double = 60, _ condition: () throws -> Bool) async throws {
    let deadline = Date().addingTimeInterval(seconds)
    while try !condition() {
        if Date() > deadline { throw TimedOut(description: "timed out after \(seconds) s waiting for \(what)") }
        try await Task.sleep(for: .milliseconds(20))
    }
}

/// A TCP port on 127.0.0.1 held for this test process: nobody listens on it now, and nobody else gets it.
///
/// The port stays bound (with `SO_REUSEADDR`, not listening) until the process ends: connections to it
/// are refused, no ephemeral bind anywhere on the machine lands on it, and a server that sets
/// `SO_REUSEADDR` (Hummingbird's default, every Go listener: Prometheus, Alertmanager) can still
/// listen on it. So a test can stop or SIGKILL a server and start it again on the same port without a
/// parallel test taking the port in between (the race a bind-read-close "free port" had).
public func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw TimedOut(description: "no socket for a free port") }
    var one: Int32 = 1
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard bound else {
        close(fd)
        throw TimedOut(description: "could not bind a free port")
    }
    // Deliberately never closed: the reservation lasts as long as the test process.
    return Int(UInt16(bigEndian: address.sin_port))
}
