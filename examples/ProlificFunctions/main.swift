// Prolific's functions service (docs/functions-swift.md): `HEARTH_FUNCTIONS_SECRET=whsec_... swift run
// prolific-functions` beside `hearth serve --functions examples/ProlificFunctions/functions.json`. HEARTH_URL is
// where the handlers read threads and snippets with each event's token (default http://127.0.0.1:8080), PORT
// where they listen (default 9000).
import HearthFunctions

try await FunctionsServer.main(defaultPort: 9000) { ProlificHandlers.functions(hearth: $0.hearthURL) }
