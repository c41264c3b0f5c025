-- One wrk script for the document workloads of both servers, driven by environment variables:
--   BENCH_MODE  create | get
--   BENCH_PATH  collection URL path for create; id prefix URL path for get (ids are PREFIX + 14 digits)
--   BENCH_AUTH  optional Authorization header value
--   BENCH_N     number of preloaded documents (get)
--   BENCH_VARY  1: every created document has its own title and count (random), not the same ones
local mode = os.getenv("BENCH_MODE")
local path = os.getenv("BENCH_PATH")
local n = tonumber(os.getenv("BENCH_N") or "30000")
local vary = os.getenv("BENCH_VARY") == "1"

dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")

-- A ~300-byte document: a title, an integer, a boolean and a 200-character body.
local body = '{"title":"A day at the lake, part two","count":42,"published":true,"body":"' .. string.rep("lorem ipsu", 20) .. '"}'

-- The same with a title and count of its own (BENCH_VARY): a format with no other `%`.
local varied = '{"title":"A day at the lake, part %d","count":%d,"published":true,"body":"' .. string.rep("lorem ipsu", 20) .. '"}'

function request()
  if mode == "create" and vary then
    local k = math.random(1, 1000000000)
    return wrk.format("POST", path, wrk.headers, string.format(varied, k, k))
  elseif mode == "create" then
    return wrk.format("POST", path, wrk.headers, body)
  else
    return wrk.format("GET", string.format("%s%014d", path, math.random(1, n)), wrk.headers, nil)
  end
end
