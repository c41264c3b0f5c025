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

local errors = 0
function response(status, headers, body)
  if mode == "create" and status ~= 200 and status ~= 201 then errors = errors + 1 end
  if mode == "get" and status ~= 200 then errors = errors + 1 end
end

function done(summary, latency, requests)
  io.write(string.format("RESULT rps=%.1f p50_ms=%.3f p99_ms=%.3f non2xx=%d\n",
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.errors.status))
end
