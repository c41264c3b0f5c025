-- One wrk script for the document workloads of both servers, driven by environment variables:
--   BENCH_MODE  create | get
--   BENCH_PATH  collection URL path for create; id prefix URL path for get (ids are PREFIX + 14 digits)
--   BENCH_AUTH  optional Authorization header value
--   BENCH_N     number of preloaded documents (get)
local mode = os.getenv("BENCH_MODE")
local path = os.getenv("BENCH_PATH")
local n = tonumber(os.getenv("BENCH_N") or "30000")

dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")

-- A ~300-byte document: a title, an integer, a boolean and a 200-character body.
local body = '{"title":"A day at the lake, part two","count":42,"published":true,"body":"' .. string.rep("lorem ipsu", 20) .. '"}'

function request()
  if mode == "create" then
    return wrk.format("POST", path, wrk.headers, body)
  else
    return wrk.format("GET", string.format("%s%014d", path, math.random(1, n)), wrk.headers, nil)
  end
end
