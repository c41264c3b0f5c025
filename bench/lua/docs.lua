-- One wrk script for the document workloads of both servers, driven by environment variables:
--   BENCH_MODE  create | get
--   BENCH_PATH  collection URL path for create; id prefix URL path for get (ids are PREFIX + 14 digits)
--   BENCH_AUTH  optional Authorization header value
--   BENCH_N     number of preloaded documents (get)
local mode = os.getenv("BENCH_MODE")
local path = os.getenv("BENCH_PATH")
local auth = os.getenv("BENCH_AUTH")
local n = tonumber(os.getenv("BENCH_N") or "30000")

wrk.headers["Content-Type"] = "application/json"
if auth and auth ~= "" then wrk.headers["Authorization"] = auth end

-- A ~300-byte document: a title, an integer, a boolean and a 200-character body.
local body = '{"title":"A day at the lake, part two","count":42,"published":true,"body":"' .. string.rep("lorem ipsu", 20) .. '"}'

local counter = 0
function setup(thread)
  counter = counter + 1
  thread:set("seed", counter)
end

function init(args)
  math.randomseed(os.time() * 1000 + (seed or 0))
end

function request()
  if mode == "create" then
    return wrk.format("POST", path, wrk.headers, body)
  else
    return wrk.format("GET", string.format("%s%014d", path, math.random(1, n)), wrk.headers, nil)
  end
end

-- No response() callback: wrk then skips handing every response to Lua, which would take CPU from the
-- servers on a 2-core machine. Non-2xx/3xx answers are still counted in summary.errors.status.
function done(summary, latency, requests)
  io.write(string.format("RESULT rps=%.1f p50_ms=%.3f p99_ms=%.3f non2xx=%d\n",
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.errors.status))
end
