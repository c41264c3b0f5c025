// The service of docs/functions-swift.md: `HEARTH_FUNCTIONS_SECRET=whsec_... swift run prolific-functions`
// beside `hearth serve --functions examples/ProlificFunctions/functions.json`.
import Foundation
import HearthFunctions

guard let secret = ProcessInfo.processInfo.environment["HEARTH_FUNCTIONS_SECRET"] else {
    print("set HEARTH_FUNCTIONS_SECRET to the endpoint's secret in the functions file (whsec_...)")
    exit(2)
}
let port = Int(ProcessInfo.processInfo.environment["PORT"] ?? "") ?? 9000
try await FunctionsServer(secret: secret, path: "/hooks", functions: ProlificHandlers.functions()).run(port: port)
