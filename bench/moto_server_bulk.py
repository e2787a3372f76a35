#!/usr/bin/env python3
"""moto_server with Lethe's launcher fixes (lib/local/moto/lethe_moto.py, the same emulator the
local stack and the tests run), plus two side doors for the benchmark.

`POST /_bench/put-objects` with `{"bucket": "...", "objects": [["key", "body"], ...]}` stores
each object with the S3 backend's own `put_object`, the call a PutObject request ends in, so
the objects are the same as PutObject's; only the HTTP round trip per key is skipped (moto
takes ~7 ms of server time per PutObject, so 60,000 objects would otherwise take 7 minutes).

`POST /_bench/throttle` with `{"keysPerSecond": R, "burst": B}` makes S3 behave as S3 does
above its request rate: each prefix partition (a key's "directory") admits R deleted keys a
second (a token bucket holding B keys, by default a second's worth and at least one 1,000-key
page; it starts full), and a DeleteObjects that
would go above it in any partition is answered 503 SlowDown, whole, as S3 answers. R = 0 turns
it off. The answer counts the DeleteObjects admitted and refused, and the keys admitted, since
the previous call, and the keys a second sustained from the first admitted request to the last.

`GET /_bench/cpu` answers the CPU time moto's request threads spent per operation (thread CPU
time, so a long poll's waiting counts nothing): where the emulator's one core goes, by request
type. `POST /_bench/cpu` answers the same and starts counting afresh.

Every request the benchmark measures goes through moto's ordinary handlers, as patched by the
launcher (without its fixes moto's conditional writes are not atomic, and the pipeline, which
relies on them, can stall or count twice).
"""

import io
import json
import os
import re
import sys
import threading
import time
from urllib.parse import parse_qs

from moto import server
from moto.core import DEFAULT_ACCOUNT_ID
from moto.s3.models import s3_backends

SEED = "/_bench/put-objects"
CPU = "/_bench/cpu"
THROTTLE = "/_bench/throttle"

_throttle_lock = threading.Lock()
_THROTTLE_FRESH = {"buckets": {}, "admitted": 0, "refused": 0, "keys": 0, "first": 0.0, "last": 0.0}
_throttle = {"rate": 0.0, "burst": 0.0, **_THROTTLE_FRESH, "firstKeys": 0}
_KEY = re.compile(rb"<Key>(.*?)</Key>", re.S)
_SLOW_DOWN = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
    b"<Message>Please reduce your request rate.</Message></Error>"
)


_TRACE = os.environ.get("BENCH_THROTTLE_TRACE")


def _trace(now, partition, count, admitted, level):
    """With BENCH_THROTTLE_TRACE=<file>: one line per partition of each DeleteObjects."""
    if _TRACE:
        with open(_TRACE, "a") as out:
            out.write(f"{now:.3f} {partition.decode()} {count} {int(admitted)} {level:.1f}\n")


def _admit(body: bytes, sent_ms: str | None = None) -> bool:
    """
    Takes room for every key of a DeleteObjects body, or none if a partition lacks it. S3 counts
    a request when it arrives; this emulator may take a request up long after (its threads share
    one interpreter, and a ListObjectsV2 here reads the whole bucket), so a request stamped with
    the time its client sent it (`x-bench-sent-at`, epoch milliseconds) is counted then.
    """
    wanted: dict[bytes, int] = {}
    for key in _KEY.findall(body):
        partition = key[: key.rfind(b"/") + 1]
        wanted[partition] = wanted.get(partition, 0) + 1
    now = float(sent_ms) / 1000 if sent_ms else time.time()
    with _throttle_lock:
        rate = _throttle["rate"]
        capacity = _throttle["burst"] or max(rate, 1000.0)
        buckets = _throttle["buckets"]
        levels = {}
        for partition, count in wanted.items():
            level, at = buckets.get(partition, (capacity, now))
            # A request sent before one counted already refills nothing.
            levels[partition] = min(capacity, level + max(0.0, now - at) * rate)
            if levels[partition] < count:
                _throttle["refused"] += 1
                _trace(now, partition, count, False, levels[partition])
                return False
        for partition, count in wanted.items():
            _trace(now, partition, count, True, levels[partition])
        for partition, count in wanted.items():
            at = buckets.get(partition, (0, now))[1]
            buckets[partition] = (levels[partition] - count, max(at, now))
        _throttle["admitted"] += 1
        _throttle["keys"] += sum(wanted.values())
        if not _throttle["first"]:
            _throttle["first"], _throttle["firstKeys"] = now, sum(wanted.values())
        _throttle["last"] = max(_throttle["last"], now)
        return True

_cpu_lock = threading.Lock()
_cpu: dict[str, list[float]] = {}


def _operation(environ) -> str:
    """`dynamodb.TransactWriteItems`, `sqs.ReceiveMessage`, `s3.ListObjectsV2`..."""
    target = environ.get("HTTP_X_AMZ_TARGET")
    if target:
        service, _, action = target.partition(".")
        return f"{service.split('_')[0].lower()}.{action}"
    query = parse_qs(environ.get("QUERY_STRING", ""), keep_blank_values=True)
    method = environ.get("REQUEST_METHOD", "GET")
    if "Action" in query:
        return f"query.{query['Action'][0]}"
    if method == "GET" and "list-type" in query:
        return "s3.ListObjectsV2"
    if method == "GET" and "versions" in query:
        return "s3.ListObjectVersions"
    if method == "GET" and "versioning" in query:
        return "s3.GetBucketVersioning"
    if method == "POST" and "delete" in query:
        return "s3.DeleteObjects"
    return f"s3.{method}"


def _json(start_response, body) -> list[bytes]:
    start_response("200 OK", [("Content-Type", "application/json")])
    return [json.dumps(body).encode("utf-8")]


class BenchApplication(server.DomainDispatcherApplication):
    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO", "")
        if path == SEED and environ.get("REQUEST_METHOD") == "POST":
            length = int(environ.get("CONTENT_LENGTH") or 0)
            request = json.loads(environ["wsgi.input"].read(length))
            backend = s3_backends[request.get("account", DEFAULT_ACCOUNT_ID)]["aws"]
            for key, body in request["objects"]:
                backend.put_object(
                    request["bucket"], key, body.encode("utf-8"), disable_notification=True
                )
            return _json(start_response, {"stored": len(request["objects"])})
        if path == THROTTLE and environ.get("REQUEST_METHOD") == "POST":
            length = int(environ.get("CONTENT_LENGTH") or 0)
            request = json.loads(environ["wsgi.input"].read(length) or b"{}")
            with _throttle_lock:
                answer = {k: _throttle[k] for k in ("admitted", "refused", "keys")}
                # Sustained: the keys after the first admitted request, over the seconds from
                # it to the last one.
                window = _throttle["last"] - _throttle["first"]
                answer["sustainedKeysPerSecond"] = (
                    (_throttle["keys"] - _throttle["firstKeys"]) / window if window > 0 else 0
                )
                _throttle.update(
                    rate=float(request.get("keysPerSecond", 0)),
                    burst=float(request.get("burst", 0)),
                    **{**_THROTTLE_FRESH, "buckets": {}},
                    firstKeys=0,
                )
            return _json(start_response, answer)
        query = environ.get("QUERY_STRING", "")
        if (
            _throttle["rate"] > 0
            and environ.get("REQUEST_METHOD") == "POST"
            and "delete" in parse_qs(query, keep_blank_values=True)
        ):
            length = int(environ.get("CONTENT_LENGTH") or 0)
            body = environ["wsgi.input"].read(length)
            environ["wsgi.input"] = io.BytesIO(body)
            if not _admit(body, environ.get("HTTP_X_BENCH_SENT_AT")):
                start_response(
                    "503 Slow Down",
                    [("Content-Type", "application/xml"), ("Content-Length", str(len(_SLOW_DOWN)))],
                )
                return [_SLOW_DOWN]
        if path == CPU:
            with _cpu_lock:
                snapshot = {op: {"count": c, "cpuSeconds": s} for op, (c, s) in _cpu.items()}
                if environ.get("REQUEST_METHOD") == "POST":
                    _cpu.clear()
            return _json(start_response, snapshot)
        if path.startswith("/moto-api"):
            return super().__call__(environ, start_response)
        operation = _operation(environ)
        started = time.thread_time()
        try:
            # Rendering the response counts too: it is drawn here, in the request's thread.
            response = super().__call__(environ, start_response)
            try:
                return list(response)
            finally:
                if hasattr(response, "close"):
                    response.close()
        finally:
            spent = time.thread_time() - started
            with _cpu_lock:
                count, seconds = _cpu.get(operation, (0, 0.0))
                _cpu[operation] = [count + 1, seconds + spent]


server.DomainDispatcherApplication = BenchApplication

if __name__ == "__main__":
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib", "local", "moto"))
    import lethe_moto  # noqa: E402  (the launcher: applies its patches, then runs moto's server)

    lethe_moto.main(sys.argv[1:])
