import Foundation

/// A child run under a memory limit and a wall-clock limit, with what it used.
public struct BoundedRun: Sendable {
    /// The child's own result; status 124 when the wall-clock limit killed it, 128+n when signal n did.
    public var result: ProcessResult
    /// Wall-clock seconds from start to exit (or kill).
    public var seconds: Double
    /// Peak resident memory of the child, in MB.
    public var peakMB: Double
    /// Whether the wall-clock limit killed it.
    public var killed: Bool
}

/// Runs `apitrace` with `arguments` under an address-space limit (`RLIMIT_AS`, so growing past it
/// fails an allocation: the process dies instead of swelling the machine) and a wall-clock limit
/// (after which it is killed, so a run that hangs fails the test instead of stalling it). A small
/// Python parent sets the limits and reports the child's time and peak memory (`ru_maxrss`).
public func apitraceBounded(_ arguments: [String], environment: [String: String] = [:], memoryMB: Int = 1536, wallSeconds: Double = 120) async throws -> BoundedRun {
    let script = """
        import json, os, resource, subprocess, sys, time
        limit = int(sys.argv[1]) << 20
        wall = float(sys.argv[2])
        def limits():
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        start = time.monotonic()
        child = subprocess.Popen(sys.argv[3:], preexec_fn=limits, stdin=subprocess.DEVNULL)
        killed = False
        try:
            status = child.wait(timeout=wall)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
            status, killed = 124, True
        if status < 0:
            status = 128 - status
        seconds = time.monotonic() - start
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        sys.stderr.write("\\n@@bounded " + json.dumps({"status": status, "seconds": seconds, "peak": peak, "killed": killed}) + "\\n")
        sys.exit(0)
        """
    let environment = ["APITRACE_CACHE_DIR": testReportCacheDirectory].merging(environment) { $1 }
    let run = try await runChild("/usr/bin/python3", ["-c", script, String(memoryMB), String(wallSeconds), try builtProduct("apitrace").path] + arguments, environment: environment)
    guard let marker = run.stderr.range(of: "\n@@bounded ", options: .backwards),
          let stats = try JSONSerialization.jsonObject(with: Data(run.stderr[marker.upperBound...].utf8)) as? [String: Any] else {
        throw BoundedRunFailed(stderr: run.stderr)
    }
    let result = ProcessResult(status: Int32(stats["status"] as? Int ?? -1), stdout: run.stdout, stderr: String(run.stderr[..<marker.lowerBound]))
    return BoundedRun(result: result, seconds: stats["seconds"] as? Double ?? 0, peakMB: stats["peak"] as? Double ?? 0, killed: stats["killed"] as? Bool ?? false)
}

/// The Python parent of ``apitraceBounded(_:environment:memoryMB:wallSeconds:)`` did not report.
public struct BoundedRunFailed: Error, CustomStringConvertible {
    public var stderr: String
    public var description: String { "the bounded run did not report: \(stderr.suffix(2000))" }
}
