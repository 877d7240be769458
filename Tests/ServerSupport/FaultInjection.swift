public import Foundation
public import Hummingbird
import HTTPTypes

/// Test-only middleware in front of the real collector: answers the next uploads with scripted
/// failures (429, 5xx) before letting them through, records when each upload arrived, and can
/// hold a response after the collector stored the file (to kill the client in that window).
public final class FaultPlan: @unchecked Sendable {
    public struct Fault: Sendable {
        public var status: Int
        public var retryAfter: String?

        public init(status: Int, retryAfter: String? = nil) {
            self.status = status
            self.retryAfter = retryAfter
        }
    }

    private let lock = NSLock()
    private var faults: [Fault]
    private var arrivals: [Date] = []
    private var passed = 0
    private var hold: (count: Int, seconds: Double)?
    /// After this many uploads passed to the collector, hold every later response this long.
    public var holdAfterPassed: (count: Int, seconds: Double)? {
        get { lock.withLock { hold } }
        set { lock.withLock { hold = newValue } }
    }

    public init(_ faults: [Fault] = []) { self.faults = faults }

    public var arrivalTimes: [Date] { lock.withLock { arrivals } }
    public var passedCount: Int { lock.withLock { passed } }

    fileprivate func arrive() -> Fault? {
        lock.withLock {
            arrivals.append(Date())
            return faults.isEmpty ? nil : faults.removeFirst()
        }
    }

    fileprivate func didPass() -> Double? {
        lock.withLock {
            passed += 1
            if let hold, passed >= hold.count { return hold.seconds }
            return nil
        }
    }
}

public struct FaultInjection: RouterMiddleware {
    public typealias Context = BasicRequestContext
    public let plan: FaultPlan

    public init(plan: FaultPlan) { self.plan = plan }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method == .post else { return try await next(request, context) }
        if let fault = plan.arrive() {
            var response = Response(status: .init(code: fault.status), body: ResponseBody(byteBuffer: ByteBuffer(string: "injected \(fault.status)\n")))
            if let retryAfter = fault.retryAfter { response.headers[.retryAfter] = retryAfter }
            return response
        }
        let response = try await next(request, context)
        if let hold = plan.didPass() { try await Task.sleep(for: .milliseconds(Int(hold * 1000))) }
        return response
    }
}
