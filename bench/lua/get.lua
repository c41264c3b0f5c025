-- A GET of the URL given on the command line, again and again (no body, no Lua per request).
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")
wrk.headers["Content-Type"] = nil
