-- One wrk script for the query workloads of both servers, driven by environment variables:
--   BENCH_METHOD  POST (Hearth: BENCH_BODY is the query) or GET (PocketBase: BENCH_PATH holds the filter)
--   BENCH_PATH    URL path (with its query string)
--   BENCH_BODY    request body for POST
--   BENCH_AUTH    optional Authorization header value
local method = os.getenv("BENCH_METHOD") or "GET"
local path = os.getenv("BENCH_PATH")
local body = os.getenv("BENCH_BODY")
local auth = os.getenv("BENCH_AUTH")

wrk.headers["Content-Type"] = "application/json"
if auth and auth ~= "" then wrk.headers["Authorization"] = auth end

function request()
  return wrk.format(method, path, wrk.headers, body)
end

function done(summary, latency, requests)
  io.write(string.format("RESULT rps=%.1f p50_ms=%.3f p99_ms=%.3f non2xx=%d\n",
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.errors.status))
end
