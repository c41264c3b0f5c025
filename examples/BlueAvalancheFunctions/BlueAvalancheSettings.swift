import AsyncHTTPClient
import Foundation

/// Where the functions reach Hearth (with each event's token) and the social networks' API.
struct BlueAvalancheSettings: Sendable {
    /// Hearth's HTTP API, e.g. `http://127.0.0.1:8080`.
    var hearthURL: URL
    /// The networks' API: a post to `twitter` goes to `<networksURL>/twitter/posts`.
    var networksURL: URL
    var httpClient: HTTPClient = .shared

    init(hearthURL: URL, networksURL: URL, httpClient: HTTPClient = .shared) {
        self.hearthURL = hearthURL
        self.networksURL = networksURL
        self.httpClient = httpClient
    }

    /// `HEARTH_URL` (default `http://127.0.0.1:8080`) and `BLUE_AVALANCHE_NETWORKS_URL`, each overridden by the
    /// arguments `--hearth-url` and `--networks-url`; nil with the reason when the networks' URL is missing or
    /// either is not an http(s) URL.
    static func from(environment: [String: String], arguments: [String]) -> Result<BlueAvalancheSettings, SettingsError> {
        var values = ["hearth-url": environment["HEARTH_URL"] ?? "http://127.0.0.1:8080",
                      "networks-url": environment["BLUE_AVALANCHE_NETWORKS_URL"]]
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            let name = String(argument.drop { $0 == "-" })
            guard argument.hasPrefix("--"), values.keys.contains(name) else { return .failure(.init("unknown argument '\(argument)'")) }
            guard let value = rest.popFirst() else { return .failure(.init("\(argument) needs a URL")) }
            values[name] = value
        }
        guard let networks = values["networks-url"] ?? nil else {
            return .failure(.init("set BLUE_AVALANCHE_NETWORKS_URL (or --networks-url) to the social networks' API"))
        }
        var urls: [String: URL] = [:]
        for (name, text) in [("hearth-url", values["hearth-url"] ?? nil), ("networks-url", networks)] {
            guard let text, let url = URL(string: text), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                return .failure(.init("--\(name): '\(text ?? "")' is not an http or https URL"))
            }
            urls[name] = url
        }
        return .success(BlueAvalancheSettings(hearthURL: urls["hearth-url"]!, networksURL: urls["networks-url"]!))
    }
}

struct SettingsError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
