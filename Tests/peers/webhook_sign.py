"""Signs messages with the `standardwebhooks` library, for the tests of Swift verifiers.

Reads --messages, a JSON list of {"id", "timestamp", "body"}, and prints a JSON list of the
`webhook-signature` values the library makes for them with --secret.
"""
import argparse
import json
from datetime import datetime, timezone

from standardwebhooks.webhooks import Webhook

parser = argparse.ArgumentParser()
parser.add_argument("--secret", required=True)
parser.add_argument("--messages", required=True)
args = parser.parse_args()

webhook = Webhook(args.secret)
with open(args.messages) as f:
    messages = json.load(f)
print(json.dumps([webhook.sign(m["id"], datetime.fromtimestamp(m["timestamp"], tz=timezone.utc), m["body"])
                  for m in messages]))
