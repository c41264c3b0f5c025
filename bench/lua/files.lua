-- One wrk script for the file workloads of both servers, driven by environment variables:
--   BENCH_MODE   put | multipart | get
--   BENCH_PATH   put: a path prefix, each request adding a name of its own (Hearth's PUT /v1/files/...);
--                multipart: the collection's records URL path (PocketBase's POST of a form with a file field)
--   BENCH_BODY   put, multipart: a file holding the image; every request sends it with 16 bytes of its own
--                appended (after a JPEG's end marker, where decoders stop), so no two uploads hold the same bytes
--   BENCH_PATHS  get: a file of URL paths, one a line; each request takes one at random
--   BENCH_AUTH   optional Authorization header value
local mode = os.getenv("BENCH_MODE")
local path = os.getenv("BENCH_PATH")

dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")

local boundary = "hearthbenchboundary7MA4YWxkTrZu0gW"
local image, paths, prefix, suffix, tag = nil, {}, nil, nil, nil
local sent = 0

local function read(name)
  local f = assert(io.open(name, "rb"))
  local bytes = f:read("*a")
  f:close()
  return bytes
end

-- Runs in each thread after common.lua's init: the bytes or the paths, read once per thread.
local seeded = init
function init(args)
  seeded(args)
  tag = string.format("%04d%04d", (seed or 0) % 10000, math.random(0, 9999))
  if mode == "get" then
    for line in io.lines(os.getenv("BENCH_PATHS")) do paths[#paths + 1] = line end
    wrk.headers["Content-Type"] = nil
  else
    image = read(os.getenv("BENCH_BODY"))
    if mode == "multipart" then
      wrk.headers["Content-Type"] = "multipart/form-data; boundary=" .. boundary
      prefix = "--" .. boundary .. '\r\nContent-Disposition: form-data; name="photo"; filename="photo.jpg"\r\n'
        .. "Content-Type: image/jpeg\r\n\r\n" .. image
      suffix = "\r\n--" .. boundary .. "--\r\n"
    else
      wrk.headers["Content-Type"] = "image/jpeg"
    end
  end
end

function request()
  if mode == "get" then
    return wrk.format("GET", paths[math.random(1, #paths)], wrk.headers, nil)
  end
  sent = sent + 1
  local unique = tag .. string.format("%08d", sent % 100000000)
  if mode == "multipart" then
    return wrk.format("POST", path, wrk.headers, prefix .. unique .. suffix)
  end
  return wrk.format("PUT", path .. unique .. ".jpg", wrk.headers, image .. unique)
end
