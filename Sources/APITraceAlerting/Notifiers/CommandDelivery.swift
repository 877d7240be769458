import Foundation

/// Runs a `command` notifier's shell command so that nothing it does can stall or kill `apitrace`.
///
/// - The notification is written to the child's standard input while its timeout runs, a slice
///   at a time through a non-blocking pipe: a command that never reads stdin only misses it.
/// - `SIGPIPE` is ignored in `apitrace` (a command that exits without reading gives `EPIPE`, not
///   a signal) and restored to its default in the child.
/// - The child leads a process group of its own; on timeout the whole group gets `SIGTERM`, then
///   `SIGKILL` a second later, so a command's own children (`sleep`, `curl`...) end with it.
/// - The child's environment is exactly `environment` (the caller passes `PATH`, `HOME` and the
///   `APITRACE_*` variables), never this process's secrets.
/// - Its standard error goes to a pipe that `apitrace` keeps draining: the first ``stderrCap`` bytes
///   are kept for the message (scrubbed by the caller), the rest is read and dropped, so a command
///   that writes gigabytes neither blocks nor reaches the terminal.
enum CommandDelivery {
    /// The most bytes of a command's standard error kept.
    static let stderrCap = 2048

    /// How the command ended, and the head of what it wrote to standard error.
    struct Run: Sendable, Equatable {
        var ending: Ending
        /// At most ``stderrCap`` bytes.
        var stderr: [UInt8] = []
        /// True when it wrote more than was kept.
        var stderrTruncated = false
    }

    /// How the command ended.
    enum Ending: Sendable, Equatable {
        /// It exited with this status.
        case exited(Int32)
        /// A signal ended it.
        case signalled(Int32)
        /// It outlived the timeout; its process group was killed.
        case timedOut
        /// It could not be started.
        case notStarted(String)
    }

    /// Ignores `SIGPIPE` process-wide, once: a write to a closed pipe or socket must fail, not kill the run.
    static let ignoreSIGPIPE: Void = { _ = signal(SIGPIPE, SIG_IGN) }()

    /// Runs `/bin/sh -c command` with `input` on standard input, standard output discarded, standard error captured (bounded).
    static func run(_ command: String, input: [UInt8], environment: [String: String], timeout: Duration) async -> Run {
        _ = ignoreSIGPIPE
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return Run(ending: .notStarted("pipe: \(String(cString: strerror(errno)))")) }
        let (readEnd, writeEnd) = (fds[0], fds[1])
        _ = fcntl(readEnd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(writeEnd, F_SETFD, FD_CLOEXEC)
        guard pipe(&fds) == 0 else {
            close(readEnd)
            close(writeEnd)
            return Run(ending: .notStarted("pipe: \(String(cString: strerror(errno)))"))
        }
        let (errorRead, errorWrite) = (fds[0], fds[1])
        _ = fcntl(errorRead, F_SETFD, FD_CLOEXEC)
        _ = fcntl(errorWrite, F_SETFD, FD_CLOEXEC)
        _ = fcntl(errorRead, F_SETFL, fcntl(errorRead, F_GETFL) | O_NONBLOCK)
        var errors = StderrHead()
        defer { close(errorRead) }

        #if canImport(Darwin)
        var actions: posix_spawn_file_actions_t? = nil
        var attributes: posix_spawnattr_t? = nil
        #else
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        posix_spawn_file_actions_adddup2(&actions, readEnd, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, errorWrite, 2)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var noMask = sigset_t()
        sigemptyset(&noMask)
        posix_spawnattr_setsigmask(&attributes, &noMask)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv: [UnsafeMutablePointer<CChar>?] = (["/bin/sh", "-c", command] as [String]).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/sh", &actions, &attributes, argv, envp)
        close(readEnd)
        close(errorWrite)
        guard spawned == 0 else {
            close(writeEnd)
            return Run(ending: .notStarted(String(cString: strerror(spawned))))
        }
        _ = fcntl(writeEnd, F_SETFL, fcntl(writeEnd, F_GETFL) | O_NONBLOCK)

        var writer: Int32? = writeEnd
        var written = 0
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while true {
            if let fd = writer {
                written += writeSome(fd, input, from: written)
                if written < 0 || written >= input.count {  // all sent, or the reader went away
                    close(fd)
                    writer = nil
                }
            }
            errors.drain(errorRead)
            var status: Int32 = 0
            let waited = waitpid(pid, &status, WNOHANG)
            if waited == pid {
                if let fd = writer { close(fd) }
                errors.drain(errorRead)
                return errors.run(ending(status))
            }
            if waited < 0, errno != EINTR {
                if let fd = writer { close(fd) }
                return errors.run(.exited(-1))
            }
            if clock.now >= deadline {
                if let fd = writer { close(fd) }
                await stopGroup(pid)
                errors.drain(errorRead)
                return errors.run(.timedOut)
            }
            try? await Task.sleep(for: .milliseconds(writer == nil ? 20 : 5))
        }
    }

    /// The head of a child's standard error; the rest is read and dropped.
    private struct StderrHead {
        var kept: [UInt8] = []
        var truncated = false

        /// Reads what the pipe holds now (never blocks; at most 1 MB per call, so a flood cannot hold the loop).
        mutating func drain(_ fd: Int32) {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            for _ in 0..<16 {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { return }
                let room = CommandDelivery.stderrCap - kept.count
                kept += buffer.prefix(min(n, max(room, 0)))
                if n > room { truncated = true }
            }
        }

        func run(_ ending: Ending) -> Run { Run(ending: ending, stderr: kept, stderrTruncated: truncated) }
    }

    /// Writes what the pipe takes now; returns the bytes written, or a negative number once the reader is gone.
    private static func writeSome(_ fd: Int32, _ input: [UInt8], from offset: Int) -> Int {
        var total = 0
        while offset + total < input.count {
            let n = input.withUnsafeBytes { buffer in
                write(fd, buffer.baseAddress! + offset + total, min(65_536, input.count - offset - total))
            }
            if n > 0 { total += n; continue }
            if n < 0, errno == EINTR { continue }
            if n < 0, errno == EAGAIN || errno == EWOULDBLOCK { return total }
            return -offset - 1  // EPIPE or another error: stop writing
        }
        return total
    }

    /// SIGTERM to the whole group, SIGKILL a second later if the leader is still there; reaps the leader.
    private static func stopGroup(_ pid: pid_t) async {
        kill(-pid, SIGTERM)
        let clock = ContinuousClock()
        let grace = clock.now.advanced(by: .seconds(1))
        var status: Int32 = 0
        while clock.now < grace {
            if waitpid(pid, &status, WNOHANG) == pid {
                kill(-pid, SIGKILL)  // the leader went; children that ignored SIGTERM go too
                return
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        kill(-pid, SIGKILL)
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
    }

    private static func ending(_ status: Int32) -> Ending {
        let signal = status & 0x7f
        return signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
    }
}
