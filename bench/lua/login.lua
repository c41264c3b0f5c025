-- Password logins against either server, driven by environment variables:
--   BENCH_PATH      the login URL path
--   BENCH_IDENTITY  the JSON field that carries the email ("email" for Hearth, "identity" for PocketBase)
--   BENCH_USERS     number of preloaded accounts; account i is user<i>@bench.example with password BENCH_PASSWORD
--   BENCH_PASSWORD  their common password
local path = os.getenv("BENCH_PATH")
local identity = os.getenv("BENCH_IDENTITY")
local users = tonumber(os.getenv("BENCH_USERS") or "100")
local password = os.getenv("BENCH_PASSWORD")

wrk.headers["Content-Type"] = "application/json"

local counter = 0
function setup(thread)
  counter = counter + 1
  thread:set("seed", counter)
end

function init(args)
  math.randomseed(os.time() * 1000 + (seed or 0))
end

function request()
  local body = string.format('{"%s":"user%d@bench.example","password":"%s"}', identity, math.random(1, users), password)
  return wrk.format("POST", path, wrk.headers, body)
end

function done(summary, latency, requests)
  io.write(string.format("RESULT rps=%.1f p50_ms=%.3f p99_ms=%.3f non2xx=%d\n",
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.errors.status))
end
