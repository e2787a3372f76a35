#!/usr/bin/env python3
"""moto_server, unchanged, plus one route for seeding the benchmark in bulk.

`POST /_bench/put-objects` with `{"bucket": "...", "objects": [["key", "body"], ...]}` stores
each object with the S3 backend's own `put_object`, the call a PutObject request ends in, so
the objects are the same as PutObject's; only the HTTP round trip per key is skipped (moto
takes ~7 ms of server time per PutObject, so 60,000 objects would otherwise take 7 minutes).
Every request the benchmark measures goes through moto's ordinary HTTP handlers.
"""

import json
import sys

from moto import server
from moto.core import DEFAULT_ACCOUNT_ID
from moto.s3.models import s3_backends

ROUTE = "/_bench/put-objects"


class BulkSeedingApplication(server.DomainDispatcherApplication):
    def __call__(self, environ, start_response):
        if environ.get("PATH_INFO") != ROUTE or environ.get("REQUEST_METHOD") != "POST":
            return super().__call__(environ, start_response)
        length = int(environ.get("CONTENT_LENGTH") or 0)
        request = json.loads(environ["wsgi.input"].read(length))
        backend = s3_backends[request.get("account", DEFAULT_ACCOUNT_ID)]["aws"]
        for key, body in request["objects"]:
            backend.put_object(
                request["bucket"], key, body.encode("utf-8"), disable_notification=True
            )
        reply = json.dumps({"stored": len(request["objects"])}).encode("utf-8")
        start_response("200 OK", [("Content-Type", "application/json")])
        return [reply]


server.DomainDispatcherApplication = BulkSeedingApplication

if __name__ == "__main__":
    server.main(sys.argv[1:])
