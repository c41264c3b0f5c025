-- What every wrk script of the benchmarks shares, loaded by each with
--   dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")
-- JSON requests, an optional Authorization header from BENCH_AUTH, a random seed per thread (for scripts that
-- draw ids or accounts), and one RESULT line the Python drivers parse.
wrk.headers["Content-Type"] = "application/json"
local auth = os.getenv("BENCH_AUTH")
if auth and auth ~= "" then wrk.headers["Authorization"] = auth end

local counter = 0
function setup(thread)
  counter = counter + 1
  thread:set("seed", counter)
end

function init(args)
  math.randomseed(os.time() * 1000 + (seed or 0))
end

-- No response() callback: wrk then skips handing every response to Lua, which would take CPU from the
-- servers on a 2-core machine. Non-2xx/3xx answers are still counted in summary.errors.status.
function done(summary, latency, requests)
  io.write(string.format("RESULT rps=%.1f p50_ms=%.3f p99_ms=%.3f non2xx=%d\n",
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.errors.status))
end
