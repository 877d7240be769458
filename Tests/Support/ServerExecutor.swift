import Foundation

/// Threads of their own for the tests' in-process servers (receivers, collectors, API servers).
///
/// Every suite of a test target shares one process and Swift's cooperative pool, which has one thread
/// a core (two here). Set-up work that keeps those threads busy held a server's answer back for more
/// than 20 s under the full CLI run (CI): a PagerDuty receiver that never sent its headers, a webhook
/// that answered after the notifier's timeout and was sent the same resolve twice. A server run with
/// this executor as its task executor preference (`group.addTask(executorPreference:)`,
/// `Task(executorPreference:)`) keeps its connection tasks, and the actors they call, on these
/// threads, which the kernel schedules like any other.
public final class ServerExecutor: TaskExecutor, @unchecked Sendable {
    /// The one executor of the test process: two threads, alive as long as the process.
    public static let shared = ServerExecutor(threads: 2)

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var head = 0

    private init(threads: Int) {
        for index in 0..<threads {
            let thread = Thread { self.work() }
            thread.name = "test-server-\(index)"
            thread.start()
        }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while head == jobs.count { condition.wait() }
            let job = jobs[head]
            head += 1
            if head == jobs.count { jobs.removeAll(keepingCapacity: true); head = 0 }
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
