import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Which redirects an ``EventSource`` follows, and with which headers.
///
/// URLSession follows redirects itself (libcurl's FoundationNetworking on Linux too) and copies every
/// header of the first request to the next one; its delegate can rewrite or refuse each hop, which is
/// where this rule applies. As browsers' fetch: credentials (`Authorization`, `Proxy-Authorization`,
/// `Cookie`, the app's ``EventSource/Configuration/secretHeaders``) never go to another origin, and once
/// a redirect left the stream's origin they stay off for the rest of the chain, even back at the
/// origin. A chain longer than ``maximumRedirects``, or to a scheme other than http(s), is refused:
/// the attempt ends as a network error and the client reconnects with backoff.
struct RedirectRule: Sendable {
    /// A URL's origin: scheme, host and port (the scheme's default when the URL has none).
    struct Origin: Hashable, Sendable {
        var scheme: String
        var host: String
        var port: Int

        init?(_ url: URL) {
            guard let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
                  let host = url.host?.lowercased()
            else { return nil }
            self.scheme = scheme
            self.host = host
            self.port = url.port ?? (scheme == "https" ? 443 : 80)
        }
    }

    /// Fetch's limit.
    static let maximumRedirects = 20

    let origin: Origin?
    let credentialHeaders: Set<String>

    /// What to do with one redirect.
    enum Decision: Equatable {
        /// Follow with this request; `leftOrigin` says whether the chain has now left the origin.
        case follow(URLRequest, leftOrigin: Bool)
        /// Do not follow; the trace `reason` of the attempt.
        case refuse(reason: String)
    }

    /// The request for redirect number `hop` (1 for the first), from the one URLSession proposes.
    ///
    /// The target is resolved from the response's `Location` against the response's URL (FoundationNetworking
    /// drops the port of a relative `Location`); the method and body stay as URLSession set them.
    func decide(proposed: URLRequest, response: HTTPURLResponse, hop: Int, leftOriginBefore: Bool) -> Decision {
        guard hop <= Self.maximumRedirects else { return .refuse(reason: "too_many_redirects") }
        var request = proposed
        if let location = Self.location(of: response),
           let target = URL(string: location, relativeTo: response.url ?? proposed.url)?.absoluteURL {
            request.url = target
        }
        guard let target = request.url, let targetOrigin = Origin(target) else {
            return .refuse(reason: "redirect_not_http")
        }
        let leftOrigin = leftOriginBefore || origin == nil || targetOrigin != origin
        if leftOrigin {
            for name in (request.allHTTPHeaderFields ?? [:]).keys where credentialHeaders.contains(name.lowercased()) {
                request.setValue(nil, forHTTPHeaderField: name)
            }
        }
        return .follow(request, leftOrigin: leftOrigin)
    }

    private static func location(of response: HTTPURLResponse) -> String? {
        for (name, value) in response.allHeaderFields {
            if let name = name as? String, name.lowercased() == "location" { return value as? String }
        }
        return nil
    }
}
