public import APITraceFormat
#if canImport(FoundationNetworking)
import Foundation
public import FoundationNetworking
#else
public import Foundation  // URLSession's types are Foundation's on Apple platforms
#endif

extension TraceEvent.Request.Timing {
    /// The phases of the transaction that brought the response: the last network load of
    /// `metrics` (earlier ones are redirects or cache lookups). `nil` when there is none, as on
    /// Linux, whose `URLSession` delivers no metrics.
    public init?(_ metrics: URLSessionTaskMetrics) {
        let transactions = metrics.transactionMetrics
        guard let last = transactions.last(where: { $0.resourceFetchType == .networkLoad }) ?? transactions.last else {
            return nil
        }
        self.init(
            fetchStart: last.fetchStartDate, domainLookupStart: last.domainLookupStartDate,
            domainLookupEnd: last.domainLookupEndDate, connectStart: last.connectStartDate,
            connectEnd: last.connectEndDate, secureConnectionStart: last.secureConnectionStartDate,
            secureConnectionEnd: last.secureConnectionEndDate, responseStart: last.responseStartDate,
            networkProtocol: last.networkProtocolName, reusedConnection: last.isReusedConnection
        )
    }

    /// Phases from the instants `URLSessionTaskTransactionMetrics` reports. A phase is left out
    /// when either end is missing or it would run backwards (a clock change during the request);
    /// a protocol name that is not a short ALPN token is left out.
    init(
        fetchStart: Date?, domainLookupStart: Date?, domainLookupEnd: Date?, connectStart: Date?, connectEnd: Date?,
        secureConnectionStart: Date?, secureConnectionEnd: Date?, responseStart: Date?,
        networkProtocol: String?, reusedConnection: Bool
    ) {
        func ms(_ start: Date?, _ end: Date?) -> Double? {
            guard let start, let end else { return nil }
            let seconds = end.timeIntervalSince(start)
            return seconds >= 0 && seconds.isFinite ? seconds * 1000 : nil
        }
        self.init(
            dnsMs: ms(domainLookupStart, domainLookupEnd), connectMs: ms(connectStart, connectEnd),
            tlsMs: ms(secureConnectionStart, secureConnectionEnd), firstByteMs: ms(fetchStart, responseStart),
            networkProtocol: networkProtocol.flatMap(Self.alpnToken), reusedConnection: reusedConnection
        )
    }

    /// `name` when it reads like an ALPN protocol id (`http/1.1`, `h2`, `h3`): at most 16 of
    /// `a-z 0-9 . / -`.
    static func alpnToken(_ name: String) -> String? {
        let utf8 = name.utf8
        guard !utf8.isEmpty, utf8.count <= 16, utf8.allSatisfy({ c in
            (c >= 0x61 && c <= 0x7A) || (c >= 0x30 && c <= 0x39) || c == 0x2E || c == 0x2F || c == 0x2D
        }) else { return nil }
        return name
    }
}
