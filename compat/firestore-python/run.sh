#!/usr/bin/env bash
# Runs the system tests of Firestore's official Python client (google-cloud-firestore 2.34.1, from its sdist)
# unchanged against a fresh Hearth serving Firestore's gRPC API, and prints how many passed.
#
#   compat/firestore-python/run.sh [FLOOR] [-- PYTEST ARGS...]
#
# FLOOR (or HEARTH_COMPAT_FLOOR): exit non-zero when fewer tests pass. HEARTH_BIN: the hearth binary (default: a
# debug build of this checkout). The venv and the sdist are kept in HEARTH_COMPAT_CACHE (default
# ~/.cache/hearth/firestore-python) between runs. docs/firestore-compat.md lists what fails and why.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
floor="${HEARTH_COMPAT_FLOOR:-0}"
if [[ $# -gt 0 && "$1" != "--" ]]; then floor="$1"; shift; fi
[[ $# -gt 0 && "$1" == "--" ]] && shift
version=2.34.1
cache="${HEARTH_COMPAT_CACHE:-$HOME/.cache/hearth/firestore-python}"
venv="$cache/venv"
src="$cache/google_cloud_firestore-$version"
python="${PYTHON:-python3}"

mkdir -p "$cache"
if [[ ! -x "$venv/bin/python" ]] || ! "$venv/bin/python" -c "import google.cloud.firestore, pytest_asyncio, pytest_subtests, test_utils" 2>/dev/null; then
    "$python" -m venv "$venv"
    "$venv/bin/pip" install -q "google-cloud-firestore==$version" "pytest<8.4" "pytest-asyncio==0.21.2" \
        pytest-subtests google-cloud-testutils mock pyyaml six
fi
if [[ ! -d "$src/tests/system" ]]; then
    rm -rf "$cache/sdist" && mkdir -p "$cache/sdist"
    "$venv/bin/pip" download -q --no-binary :all: --no-deps "google-cloud-firestore==$version" -d "$cache/sdist"
    tar -xzf "$cache/sdist/google_cloud_firestore-$version.tar.gz" -C "$cache"
fi

hearth="${HEARTH_BIN:-}"
if [[ -z "$hearth" ]]; then
    (cd "$root" && swift build --product hearth >/dev/null)
    hearth="$(cd "$root" && swift build --show-bin-path)/hearth"
fi

free_port() { "$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
data="$(mktemp -d)"
log="$data/hearth.log"
http_port="$(free_port)"
grpc_port="$(free_port)"
"$hearth" serve --dev --data "$data/db" --port "$http_port" --grpc-port "$grpc_port" --log-level warning >"$log" 2>&1 &
pid=$!
cleanup() { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$data"; }
trap cleanup EXIT
for _ in $(seq 1 300); do
    grep -q "Firestore's gRPC API" "$log" 2>/dev/null && break
    kill -0 "$pid" 2>/dev/null || { cat "$log"; echo "hearth did not start" >&2; exit 1; }
    sleep 0.1
done

report="$data/report.txt"
(cd "$src" && FIRESTORE_EMULATOR_HOST="127.0.0.1:$grpc_port" GCLOUD_PROJECT=hearth-compat \
    "$venv/bin/python" -m pytest tests/system -p no:cacheprovider -q -rfE "$@" >"$report" 2>&1) || true
cat "$report"
summary="$(tail -n 1 "$report")"
passed="$(grep -oE '[0-9]+ passed' <<<"$summary" | grep -oE '[0-9]+' || echo 0)"
echo "firestore-python system tests: $passed passed (floor $floor)"
if (( passed < floor )); then
    echo "fewer than $floor passed" >&2
    exit 1
fi
