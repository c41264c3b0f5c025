-- One wrk script for the query workloads of both servers, driven by environment variables:
--   BENCH_METHOD  POST (Hearth: BENCH_BODY is the query) or GET (PocketBase: BENCH_PATH holds the filter)
--   BENCH_PATH    URL path (with its query string)
--   BENCH_BODY    request body for POST
--   BENCH_AUTH    optional Authorization header value
local method = os.getenv("BENCH_METHOD") or "GET"
local path = os.getenv("BENCH_PATH")
local body = os.getenv("BENCH_BODY")

dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")

-- Every request is the same, so no request() function: wrk then builds the request once and sends its bytes
-- again and again, instead of calling into Lua to format each one (CPU taken from the servers otherwise).
wrk.method = method
wrk.path = path
wrk.body = body
