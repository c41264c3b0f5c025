// Blue Avalanche's functions: `HEARTH_FUNCTIONS_SECRET=whsec_... BLUE_AVALANCHE_NETWORKS_URL=https://... swift run
// blue-avalanche-functions` beside `hearth serve --functions examples/BlueAvalancheFunctions/functions.json`.
import Foundation
import HearthFunctions

let environment = ProcessInfo.processInfo.environment
guard let secret = environment["HEARTH_FUNCTIONS_SECRET"] else {
    print("set HEARTH_FUNCTIONS_SECRET to the endpoint's secret in the functions file (whsec_...)")
    exit(2)
}
let settings: BlueAvalancheSettings
switch BlueAvalancheSettings.from(environment: environment, arguments: Array(CommandLine.arguments.dropFirst())) {
case .success(let value): settings = value
case .failure(let error):
    print(error)
    exit(2)
}
let port = Int(environment["PORT"] ?? "") ?? 9000
try await FunctionsServer(secret: secret, path: "/hooks", functions: BlueAvalancheHandlers.functions(settings)).run(port: port)
