-- The same request every time, for comparing with a driver that can only repeat one request (h2load):
--   BENCH_METHOD  GET | POST
--   BENCH_PATH    URL path
--   BENCH_BODY    optional file whose bytes are the body (JSON)
--   BENCH_AUTH    optional Authorization header value
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")

wrk.method = os.getenv("BENCH_METHOD") or "GET"
wrk.path = os.getenv("BENCH_PATH")
local file = os.getenv("BENCH_BODY")
if file and file ~= "" then
  local f = assert(io.open(file, "rb"))
  wrk.body = f:read("*a")
  f:close()
end
