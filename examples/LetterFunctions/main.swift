// Letter's functions (docs/apps/letter.md): `HEARTH_FUNCTIONS_SECRET=whsec_... swift run letter-functions`
// beside `hearth serve --demo letter --functions examples/LetterFunctions/functions.json` and push settings.
// HEARTH_URL is where the handlers reach Hearth (default http://127.0.0.1:8080), PORT where they listen
// (default 9001).
import HearthFunctions

try await FunctionsServer.main(defaultPort: 9001) { LetterHandlers.functions(hearth: $0.hearthURL) }
