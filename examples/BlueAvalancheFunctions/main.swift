// Blue Avalanche's functions: `HEARTH_FUNCTIONS_SECRET=whsec_... BLUE_AVALANCHE_NETWORKS_URL=https://... swift run
// blue-avalanche-functions` beside `hearth serve --functions examples/BlueAvalancheFunctions/functions.json`.
// PORT is where they listen (default 9000).
import Foundation
import HearthFunctions

try await FunctionsServer.main(defaultPort: 9000) { environment throws(FunctionsEnvironment.Problem) in
    let arguments = Array(CommandLine.arguments.dropFirst())
    switch BlueAvalancheSettings.from(environment: ProcessInfo.processInfo.environment, arguments: arguments) {
    case .success(let settings): return BlueAvalancheHandlers.functions(settings)
    case .failure(let error): throw FunctionsEnvironment.Problem(error.description)
    }
}
