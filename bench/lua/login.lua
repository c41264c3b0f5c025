-- Password logins against either server, driven by environment variables:
--   BENCH_PATH      the login URL path
--   BENCH_IDENTITY  the JSON field that carries the email ("email" for Hearth, "identity" for PocketBase)
--   BENCH_USERS     number of preloaded accounts; account i is user<i>@bench.example with password BENCH_PASSWORD
--   BENCH_PASSWORD  their common password
local path = os.getenv("BENCH_PATH")
local identity = os.getenv("BENCH_IDENTITY")
local users = tonumber(os.getenv("BENCH_USERS") or "100")
local password = os.getenv("BENCH_PASSWORD")

dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")

function request()
  local body = string.format('{"%s":"user%d@bench.example","password":"%s"}', identity, math.random(1, users), password)
  return wrk.format("POST", path, wrk.headers, body)
end
