// ComeOver's functions (docs/apps/comeover.md): `HEARTH_FUNCTIONS_SECRET=whsec_... swift run comeover-functions`
// beside `hearth serve --demo comeover --functions examples/ComeOverFunctions/functions.json`, with SMTP and
// push settings. HEARTH_URL is where the handlers reach Hearth (default http://127.0.0.1:8080), PORT where they
// listen (default 9002).
import HearthFunctions

try await FunctionsServer.main(defaultPort: 9002) { ComeOverHandlers.functions(hearth: $0.hearthURL) }
