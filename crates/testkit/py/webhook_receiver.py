"""A webhook receiver for the tests, checking each post with the official Standard Webhooks
library (`standardwebhooks` on PyPI), not with relay-mesh's code.

    webhook_receiver.py PORT_FILE OUT_FILE DOWN_FILE SECRET

Listens on a free loopback port (written to PORT_FILE once listening). Each post becomes one
JSON line in OUT_FILE: its webhook-id, whether the signature verified, the event type and seq,
and the status answered: 503 while DOWN_FILE exists, else 204.
"""

import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook

port_file, out_file, down_file, secret = sys.argv[1:5]
verifier = Webhook(secret)


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        record = {"id": self.headers.get("webhook-id"), "path": self.path}
        try:
            verifier.verify(body, dict(self.headers.items()))
            record["valid"] = True
        except Exception as e:  # the library's verification error, any kind
            record["valid"] = False
            record["error"] = repr(e)
        try:
            doc = json.loads(body)
            record["type"] = doc.get("type")
            record["seq"] = doc.get("data", {}).get("seq")
            record["sessionId"] = doc.get("data", {}).get("sessionId")
        except ValueError:
            record["type"] = None
        status = 503 if os.path.exists(down_file) else 204
        record["status"] = status
        with open(out_file, "a") as f:
            f.write(json.dumps(record) + "\n")
        self.send_response(status)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.replace(port_file + ".tmp", port_file)
server.serve_forever()
