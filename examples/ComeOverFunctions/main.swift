// ComeOver's functions (docs/apps/comeover.md): `HEARTH_FUNCTIONS_SECRET=whsec_... swift run comeover-functions`
// beside `hearth serve --demo comeover --functions examples/ComeOverFunctions/functions.json`, with SMTP and
// push settings. HEARTH_URL is where the handlers reach Hearth (default http://127.0.0.1:8080).
import Foundation
import HearthFunctions

guard let secret = ProcessInfo.processInfo.environment["HEARTH_FUNCTIONS_SECRET"] else {
    print("set HEARTH_FUNCTIONS_SECRET to the endpoint's secret in the functions file (whsec_...)")
    exit(2)
}
let port = Int(ProcessInfo.processInfo.environment["PORT"] ?? "") ?? 9002
guard let hearth = URL(string: ProcessInfo.processInfo.environment["HEARTH_URL"] ?? "http://127.0.0.1:8080") else {
    print("HEARTH_URL is not a URL")
    exit(2)
}
try await FunctionsServer(secret: secret, path: "/hooks", functions: ComeOverHandlers.functions(hearth: hearth)).run(port: port)
