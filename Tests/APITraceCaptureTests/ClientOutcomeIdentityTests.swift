import APITraceCapture
import APITraceTesting
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// Client-side outcomes (issue 12) must have the same identities on Linux and Apple platforms,
/// whether they arrive as `URLError`, as a bridged `NSError` in `NSURLErrorDomain`, or as Swift's
/// `CancellationError`.
@Suite("Client-side outcome identities")
struct ClientOutcomeIdentityTests {
    @Test("URLError and NSURLErrorDomain forms give one identity", arguments: [
        (URLError.Code.cancelled, "URLError.cancelled"),
        (.notConnectedToInternet, "URLError.notConnectedToInternet"),
        (.dataNotAllowed, "URLError.dataNotAllowed"),
        (.internationalRoamingOff, "URLError.internationalRoamingOff"),
        (.callIsActive, "URLError.callIsActive"),
        (.backgroundSessionWasDisconnected, "URLError.backgroundSessionWasDisconnected"),
    ])
    func urlErrors(code: URLError.Code, identity: String) {
        #expect(ErrorIdentity.of(URLError(code)) == identity)
        #expect(ErrorIdentity.of(NSError(domain: NSURLErrorDomain, code: code.rawValue)) == identity)
    }

    @Test("Linux's form of a device without a network is URLError.notConnectedToInternet, as on Apple platforms")
    func linuxOffline() {
        // What FoundationNetworking threw in a network namespace with no route (probe, 2026-11-23).
        let offline = URLError(URLError.Code.unknown, userInfo: [
            NSLocalizedDescriptionKey: "Failed to connect to 10.9.9.9 port 80 after 0 ms: Couldn't connect to server",
        ])
        #expect(ErrorIdentity.of(offline) == "URLError.notConnectedToInternet")
        #expect(ErrorIdentity.of(URLError(URLError.Code.unknown)) == "URLError.unknown")
        let refused = URLError(URLError.Code.cannotConnectToHost, userInfo: [
            NSLocalizedDescriptionKey: "Failed to connect to 127.0.0.1 port 9 after 0 ms: Couldn't connect to server",
        ])
        #expect(ErrorIdentity.of(refused) == "URLError.cannotConnectToHost")
    }

    @Test("CancellationError is CancellationError, also through a request's fail")
    func cancellation() {
        #expect(ErrorIdentity.of(CancellationError()) == "CancellationError")
        let traces = TestTracer()
        traces.tracer.startRequest(method: "GET", route: "/a", host: nil).fail(CancellationError())
        #expect(traces.requests.first?.error == "CancellationError")
    }

    @Test("the runtime's enum case-name function is found here, so the Mirror fallback is not in use")
    func enumCaseNameAvailable() {
        enum Sample: Error, CustomStringConvertible { case quiet; var description: String { "custom text" } }
        // A custom description would hide the case from the fallback: only the runtime function names it.
        #expect(ErrorIdentity.of(Sample.quiet).hasSuffix("Sample.quiet"))
    }
}
