// Prolific's functions service (docs/functions-swift.md): `HEARTH_FUNCTIONS_SECRET=whsec_... swift run
// prolific-functions` beside `hearth serve --functions examples/ProlificFunctions/functions.json`.
import Foundation
import HearthFunctions

guard let secret = ProcessInfo.processInfo.environment["HEARTH_FUNCTIONS_SECRET"] else {
    print("set HEARTH_FUNCTIONS_SECRET to the endpoint's secret in the functions file (whsec_...)")
    exit(2)
}
let port = Int(ProcessInfo.processInfo.environment["PORT"] ?? "") ?? 9000
// Where the handlers read threads and snippets (with each event's token).
let hearthURL = ProcessInfo.processInfo.environment["HEARTH_URL"] ?? "http://127.0.0.1:8080"
guard let hearth = URL(string: hearthURL), hearth.host != nil else {
    print("HEARTH_URL must be Hearth's http(s) address, got '\(hearthURL)'")
    exit(2)
}
try await FunctionsServer(secret: secret, path: "/hooks", functions: ProlificHandlers.functions(hearth: hearth)).run(port: port)
