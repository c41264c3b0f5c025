#!/usr/bin/env bash
# Installs the Python peers the end-to-end tests start (aiosmtpd, a real SMTP server; tuspy, a tus client;
# standardwebhooks, the Standard Webhooks library a receiver verifies signatures with) into .build/peers-venv,
# where the tests look for them. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=.build/peers-venv
if ! "$venv/bin/python" -c "import aiosmtpd, tusclient, standardwebhooks" >/dev/null 2>&1; then
  python3 -m venv "$venv" 2>/dev/null || {
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
    python3 -m venv "$venv"
  }
  "$venv/bin/pip" install -q -r Tests/peers/requirements.txt
fi
