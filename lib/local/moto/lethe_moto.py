"""lethe_moto: moto's server, patched to behave as AWS documents where Lethe depends on it.

Run it as moto_server is run (`python3 lethe_moto.py -H 127.0.0.1 -p PORT`); startMoto() in
lib/local/emulator.ts does. With LETHE_MOTO_EXIT_WITH_PARENT=1 in its environment (startMoto sets
it) the server exits once the process that started it has gone, however that one ended: a
`kill -9` of `npm start` leaves no emulator behind on its port. Started by hand, from a terminal,
it runs until it is stopped. Lethe's production code follows AWS; where moto differs, we patch
moto here, not Lethe. Written against moto 5.2.1: each patch wraps or replaces one moto function
at import time. test/integration/emulator-fixes.test.ts has one `describe` per patch; its tests
state the AWS behaviour and fail against a bare moto_server.

server-dispatch-cost
    AWS: a request's cost is its own; services do not wait on one another.
    moto 5.2.1: every request picks its backend under one server-wide lock, and there lists
    moto's package directory and stats each of its ~200 entries (backends.list_of_moto_modules);
    every request is then logged to stderr. Under a pipeline's load most request threads spent
    their time queued on that lock (a sampling profile: 88% of thread time).
    Fix: the list of moto's modules is read once (it cannot change while the server runs) and
    request lines are not logged (warnings and errors still are). Nothing a client sees in an
    answer changes.

server-keep-alive
    AWS: an endpoint keeps an HTTP/1.1 connection open for the client's next request.
    moto 5.2.1 on werkzeug 3.1: every answer says `Connection: close` (werkzeug's run_wsgi adds
    it whatever the protocol), and after each answer the server thread waits 10 ms for stray
    body bytes. Every SDK call paid a new TCP connection, and moto a new server thread: 933
    connections to the DynamoDB emulator for 40 small deletions.
    Fix: an HTTP/1.1 request with a Content-Length (or no body) is read whole, answered with a
    Content-Length in one write (head and body apart, Nagle's algorithm held every answer on a
    kept-alive connection for the client's delayed ACK: 46 ms a sequential call, against 3.5 ms
    with a connection each and 2.4 ms now), and the connection stays open for the next one;
    anything else (chunked bodies, HTTP/1.0, `Connection: close`) goes through werkzeug.

dynamodb-atomic-writes
    AWS: a conditional write is atomic per item: of concurrent writes conditioned on the same
    state, exactly one succeeds.
    moto 5.2.1: the threaded server runs requests side by side and nothing locks between a
    condition check and its write (models.DynamoDBBackend.update_item), so two writes can both
    pass the same condition (a probe: rounds of 5 such writes, 2 or 3 winners in many).
    Fix: one lock around every DynamoDB and DynamoDB Streams request (their handlers'
    call_action): requests run one at a time and never see another half applied.

dynamodb-answer-cost
    AWS: DynamoDB and DynamoDB Streams answer in JSON whatever the size of the items.
    moto 5.2.1: answers go through a serializer that walks the service model for every
    attribute of every item; a GetRecords of a few dozen records of a deletion's chains took
    0.1 s of the emulator's one core, a Query of 150 chains 0.15 s, all of it inside the lock of
    dynamodb-atomic-writes, where every other DynamoDB request waits.
    Fix: the item actions (ITEM_ACTIONS) and GetRecords answer with moto's own DynamoDB JSON
    encoder (what moto 4 sent).
    The JSON is the same; test/integration/emulator-fixes.test.ts compares it with bare moto's.

dynamodb-cancelled-transactions
    AWS: a cancelled TransactWriteItems changes nothing: no item, no stream record, and the
    table's stream goes on as if it had not been sent.
    moto 5.2.1: transact_write_items deep-copies each table it names, applies the writes one by
    one and, when one fails, puts the copies in place of the tables. That undoes the writes other
    requests made meanwhile, and swaps the table's stream shard: shard iterators taken before
    keep reading the old one (they show the cancelled write's record and never a later one) and
    the copy numbers its next record with the cancelled record's sequence number.
    The copies also make every transaction cost as much as its table and the table's whole
    stream history (150 chains settling one by one took a minute).
    Fix: under the lock above, no table is copied: the transaction keeps a copy of each item it
    names and, when it is cancelled, puts those items back and drops the stream records it
    appended, in the original table objects.

dynamodb-query-cost
    AWS: a Query reads the partition it names (or the index's items); its cost grows with what
    it reads, not with the table.
    moto 5.2.1: Table.query starts from all_items(), every item of the table sorted, and then
    keeps the partition's: each Query costs a sort of the whole table, growing with every item
    the pipeline writes. (Measured alone on a deletion of 150 partitions it saved little: most of
    a Query's 0.15 s there was the serializer, see dynamodb-answer-cost.)
    Fix: while a Query runs, the table's candidates are the named partition's items (for an
    index, every item unsorted: the query sorts what matches). Results are unchanged.

dynamodb-expression-cost
    AWS: an item's cost is its own (a write, a read, a projection), whatever the expression.
    moto 5.2.1: every UpdateItem tokenizes and parses its UpdateExpression twice (once to check
    the names it uses, once to apply it), and a transaction's updates the same; Item.project
    turns the whole item into plain JSON once per projected attribute, for every item a query
    of an index with a projection returns (the list index of a tenant's deletions). Together
    about a quarter of the DynamoDB emulator's time while 40 small deletions ran at once. Then
    the validator deep-copies the tree before it fills it in, node by node through pickling's
    protocol: a fifth of a TransactWriteItems' time in a profile of 40 small deletions.
    Every ConditionExpression is lexed afresh too, a regular expression per token, and a
    transaction's condition twice (its check, then the write's own): a third of a DynamoDB
    request's parsing in a profile of 40 small deletions.
    Fix: parsed UpdateExpressions are kept by their text (the validator works on a copy, so the
    kept tree is never changed), that copy is made by walking the tree's nodes (what deepcopy
    does, less its pickling; the transactions of 40 small deletions took 0.9 to 1.0 s of the
    emulator's core, from 1.2 s), Item.project converts the item once, and a
    ConditionExpression's tokens are kept by its text (tokens only: names and values are read
    by the parse that follows, per request). Answers are unchanged;
    test/integration/emulator-cost-patches.test.ts compares them with bare moto's, one update
    expression applied to two items and one condition sent with three sets of values included.

s3-version-markers
    AWS: ListObjectVersions with key-marker alone lists keys after it (no version of the marker
    key); with key-marker and version-id-marker, the versions after that one (the rest of that
    key's versions, newest first, then later keys), whether or not the marker still exists.
    moto 5.2.1: key-marker alone skips the keys before it and then one more version: the marker
    key's newest (its older versions are listed) or, if the marker key does not exist, the next
    key's newest (lost). A version-id-marker naming a deleted version skips everything: an empty
    page, not truncated.
    Fix: turn the markers into the (key, version) just before where S3 starts, which moto
    handles right. Deletions of a version are remembered (with the version of that key just
    older) so a marker naming a deleted version resumes with that key's older versions.

s3-list-versions-cost
    AWS: ListObjectVersions reads the keys under its prefix; its cost grows with what it lists.
    moto 5.2.1: list_object_versions deep-copies every version of every key in the bucket (bodies
    included) and sorts them all before it looks at the prefix: a verification listing of an
    empty location cost 60 ms of the S3 emulator's core in a bucket of 1,200 objects, and 40
    deletions verifying at once queued behind one another.
    Fix: while a listing runs, its thread sees the bucket's keys under the prefix only (what the
    listing keeps anyway). Answers are unchanged; test/integration/emulator-cost-patches.test.ts
    compares them with bare moto's.

s3-list-objects-cost
    AWS: ListObjectsV2 reads the page it answers; its cost grows with the page, not the bucket.
    moto 5.2.1: list_objects_v2 walks every key of the bucket through its versioned store (a
    copy of the store and two Python calls per key), builds every match under the prefix as an
    object, sorts them twice and only then skips to the start-after key and cuts the page: 45
    to 110 ms of the S3 emulator's core per page of 100 keys in a bucket of 60,000, whatever
    the page. Ten chains listing such pages kept that one core busy, so the benchmark's
    simulated S3 limit measured the emulator's listing cost instead of Lethe's pacing.
    Fix: a listing without a delimiter picks, by name alone, the keys under the prefix after
    its start (start-after or continuation token), sorts those names and builds only the page.
    Listings with a delimiter, and tokens moto does not know, are moto's own. Answers are
    unchanged; test/integration/emulator-cost-patches.test.ts compares them with bare moto's.

s3-serial-requests
    AWS: a request's cost is its own; requests sent at once do not make one another dearer.
    moto 5.2.1: the threaded server runs S3 requests side by side in one Python process, where
    they take turns on the interpreter lock. Ten ListObjectsV2 of 1,000 keys sent at once cost
    15% to 40% more of the emulator's core than the same ten sent one after another, and are
    answered all together at the end rather than one by one (a pipeline's first deletes waited
    for every chain's first listing).
    Fix: S3 requests are served one at a time (a lock around moto's S3 handlers; the body of a
    request with a Content-Length is read before, by server-keep-alive). Answers are unchanged;
    test/integration/emulator-cost-patches.test.ts sends requests at once through it.

s3-delete-objects-malformed-xml
    AWS: DeleteObjects whose body is not well-formed XML (e.g. a key with U+0001, which XML 1.0
    cannot carry) is answered 400 MalformedXML.
    moto 5.2.1: the XML parser's ExpatError escapes the handler: 500 with an HTML page.
    Fix: answer that ExpatError with moto's own MalformedXML error (400, S3's error XML).

sqs-receive-lock
    AWS: a received message is invisible to other receives for its visibility timeout.
    moto 5.2.1: receive_message checks a message's visibility and then marks it received, with
    no lock between, so two concurrent receives can take the same message (a probe: 2 of 200
    messages with 20 concurrent receivers).
    Fix: one receive at a time takes messages (a lock around each pass over the queue); long
    polls wait between passes outside the lock, as moto's own loop does.
    AWS: a long poll receives a delayed message when its delay ends (and an in-flight one when
    its visibility timeout does). moto 5.2.1: a long poll waits in slices of a second, woken
    only by a new message, so a message whose delay ended waited up to a second more (a paced
    chain's page, handed on with a delay to its slot, came late by half a second on average).
    Fix: a long poll's wait ends when the queue's next delayed or in-flight message is due.

FAULT MODES

Off unless named in LETHE_MOTO_FAULTS, a JSON object of mode to rate or size (startMoto's
`faults` option sets it; LETHE_MOTO_FAULT_SEED seeds the draws). Each is something AWS does
that moto never does, so that the tests that turn it on see what a deployed stack would. A
mode is added with `fault_rate(name)` or `fault_size(name)` where its patch decides, and a
test in test/integration/emulator-fixes.test.ts shows it.

s3-empty-truncated-pages (a size N)
    AWS: S3 may answer a ListObjectsV2 or ListObjectVersions page with no keys and IsTruncated
    true (KeyCount 0 and a NextContinuationToken; for versions, NextKeyMarker and
    NextVersionIdMarker), e.g. behind many delete markers or expired objects, many in a row.
    moto 5.2.1: a truncated page always holds keys.
    Mode: every listing answers N empty truncated pages before each real page (the last one
    too): their token (or version-id marker) holds the request that began the run and a count,
    and the request after the Nth is answered as that one would have been. An empty versions
    page names as NextKeyMarker the key marker asked (at the start, the prefix; a listing of a
    whole bucket from its start gets no empty pages).

dynamodb-transaction-conflict (a rate)
    AWS: a TransactWriteItems that meets another transaction in flight on one of its items is
    cancelled: TransactionCanceledException (400) whose CancellationReasons hold
    TransactionConflict for that item and None for the others; a PutItem, UpdateItem or
    DeleteItem on an item a transaction is working on is refused with
    TransactionConflictException (400), which the SDK does not retry. Neither applies anything.
    Reads are never refused so (GetItem, Query and BatchGetItem read the last committed state).
    moto 5.2.1: never (and dynamodb-atomic-writes runs one DynamoDB request at a time).
    Mode: that share of TransactWriteItems is cancelled so (the conflicting item drawn among
    its items), and that share of PutItem, UpdateItem and DeleteItem refused so, before moto
    looks at them: nothing is applied, no stream record is written.
"""

import base64
import json
import os
import random
import sys
import threading
import time
import traceback
import urllib.parse
from functools import wraps
from xml.parsers.expat import ExpatError

import moto
from moto import server

MOTO_SERIES = "5.2."
_MISSING = object()
_PATCHES = []


def _patch(name):
    """Registers a patch; main() applies each before the server starts."""

    def register(function):
        _PATCHES.append((name, function))
        return function

    return register


def _wrap(owner, attribute, make):
    """Replaces owner.attribute with make(original)."""
    original = getattr(owner, attribute)
    setattr(owner, attribute, wraps(original)(make(original)))


_FAULTS = json.loads(os.environ.get("LETHE_MOTO_FAULTS") or "{}")
_fault_random = random.Random(int(os.environ.get("LETHE_MOTO_FAULT_SEED") or "1"))
_fault_lock = threading.Lock()


def fault_size(name, default=0):
    """The number a fault mode was given (its size: pages, hops, ...), or `default` when off."""
    return _FAULTS.get(name, default)


def fault_rate(name):
    """True, at the mode's rate (a fraction of the calls), when the mode is on; False when off."""
    rate = _FAULTS.get(name, 0)
    if rate <= 0:
        return False
    with _fault_lock:
        return _fault_random.random() < rate


_dynamodb_lock = threading.RLock()


@_patch("server-dispatch-cost")
def _server_dispatch_cost():
    import logging

    from moto import backends

    from werkzeug.serving import WSGIRequestHandler

    modules = tuple(backends.list_of_moto_modules())
    backends.list_of_moto_modules = lambda: modules
    # One line per request on stderr, through colorama: the emulator's errors still show.
    logging.getLogger("werkzeug").setLevel(logging.WARNING)


# Headers the keep-alive answer sets itself.
_FRAMING = frozenset({"content-length", "transfer-encoding", "connection"})


@_patch("server-keep-alive")
def _server_keep_alive():
    import io
    import socket

    from werkzeug.serving import WSGIRequestHandler

    WSGIRequestHandler.protocol_version = "HTTP/1.1"
    run_through_werkzeug = WSGIRequestHandler.run_wsgi

    def run_wsgi(self):
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        length = self.headers.get("Content-Length", "0").strip()
        if (
            self.request_version != "HTTP/1.1"
            or self.close_connection
            or "Transfer-Encoding" in self.headers
            or not length.isdigit()
        ):
            return run_through_werkzeug(self)
        if self.headers.get("Expect", "").lower().strip() == "100-continue":
            self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        # The whole body is read before the app runs: what it leaves unread cannot be taken
        # for the next request on this connection.
        body = self.rfile.read(int(length))
        self.environ = environ = self.make_environ()
        environ["wsgi.input"] = io.BytesIO(body)
        answer = {}

        def start_response(status, headers, exc_info=None):
            answer["status"], answer["headers"] = status, headers
            return lambda data: answer.setdefault("written", []).append(data)

        try:
            iterable = self.server.app(environ, start_response)
            chunks = answer.setdefault("written", [])
            try:
                chunks.extend(iterable)  # what write() sent, then what the app returns, in order
            finally:
                getattr(iterable, "close", lambda: None)()
        except Exception:  # as werkzeug does: a 500, logged, and this connection closed
            self.server.log("error", f"Error on request:\n{traceback.format_exc()}")
            self.send_error(500)
            self.close_connection = True
            return
        code, _, reason = answer["status"].partition(" ")
        self.send_response(int(code), reason)
        bodiless = self.command == "HEAD" or int(code) in (204, 304) or int(code) < 200
        for name, value in answer["headers"]:
            # A HEAD answer keeps the length of what a GET would send.
            if name.lower() not in _FRAMING or (bodiless and name.lower() == "content-length"):
                self.send_header(name, value)
        payload = b"" if bodiless else b"".join(chunks)
        if not bodiless:
            self.send_header("Content-Length", str(len(payload)))
        # Head and body in one write: two small writes on a kept-alive connection wait out
        # Nagle's algorithm against the client's delayed ACK (40 ms an answer).
        self._headers_buffer.append(b"\r\n" + payload)
        self.flush_headers()

    WSGIRequestHandler.run_wsgi = run_wsgi


@_patch("dynamodb-atomic-writes")
def _dynamodb_atomic_writes():
    from moto.dynamodb.responses import DynamoHandler
    from moto.dynamodbstreams.responses import DynamoDBStreamsHandler

    def serialized(call_action):
        def call(self, *args, **kwargs):
            with _dynamodb_lock:
                return call_action(self, *args, **kwargs)

        return call

    _wrap(DynamoHandler, "call_action", serialized)
    _wrap(DynamoDBStreamsHandler, "call_action", serialized)


@_patch("dynamodb-answer-cost")
def _dynamodb_answer_cost():
    from moto.core.responses import ActionResult
    from moto.dynamodb.models.utilities import dynamo_json_dump
    from moto.dynamodb.responses import DynamoHandler
    from moto.dynamodbstreams.responses import DynamoDBStreamsHandler

    from moto.dynamodb.responses import DynamoResult

    def as_json(action):
        def answer(self, *args, **kwargs):
            result = action(self, *args, **kwargs)
            plain = type(result) in (ActionResult, DynamoResult)
            if not plain or not isinstance(result.result, dict):
                return result  # an answer of another shape: moto's own way
            # Under dynamodb-atomic-writes' lock, as the serializer was: nothing changes meanwhile.
            return dynamo_json_dump({k: v for k, v in result.result.items() if v is not None})

        return answer

    for action in ITEM_ACTIONS:
        _wrap(DynamoHandler, action, as_json)
    _wrap(DynamoDBStreamsHandler, "get_records", as_json)


# The DynamoDB actions whose answers are items (dynamodb-answer-cost).
ITEM_ACTIONS = (
    "get_item",
    "put_item",
    "update_item",
    "delete_item",
    "query",
    "scan",
    "batch_get_item",
    "batch_write_item",
    "transact_get_items",
    "transact_write_items",
)


@_patch("dynamodb-cancelled-transactions")
def _dynamodb_cancelled_transactions():
    from moto.dynamodb import models
    from moto.dynamodb.models.dynamo_type import DynamoType
    from moto.dynamodb.models.table import Table

    real_copy = models.copy

    class _TablesKept:
        """The models module's `copy`: tables are no longer deep-copied before a transaction."""

        def __getattr__(self, name):
            return getattr(real_copy, name)

        @staticmethod
        def deepcopy(value, *args, **kwargs):
            if isinstance(value, Table):
                return value  # rolled back in place, item by item, below
            return real_copy.deepcopy(value, *args, **kwargs)

    models.copy = _TablesKept()

    def slot_of(self, op):
        """(table, hash, range) of the item one action of a transaction names, if any."""
        table = self.tables.get(op.get("TableName"))
        key = op.get("Item") if "Item" in op else op.get("Key")
        if table is None or not isinstance(key, dict) or table.hash_key_attr not in key:
            return None
        hash_value = DynamoType(key[table.hash_key_attr])
        range_value = None
        if table.range_key_attr is not None:
            if table.range_key_attr not in key:
                return None
            range_value = DynamoType(key[table.range_key_attr])
        return table, hash_value, range_value

    def in_place(transact_write_items):
        def transact(self, transact_items, *args, **kwargs):
            # Under dynamodb-atomic-writes' lock: nobody else writes until this returns.
            saved, streams = [], {}
            for item in transact_items if isinstance(transact_items, list) else []:
                op = next(iter(item.values()), None) if isinstance(item, dict) else None
                slot = slot_of(self, op) if isinstance(op, dict) else None
                if slot is None:
                    continue
                table, hash_value, range_value = slot
                current = table.get_item(hash_value, range_value)
                saved.append((table, hash_value, range_value, real_copy.deepcopy(current)))
                if table.stream_shard is not None:
                    streams.setdefault(id(table), (table, len(table.stream_shard.items)))
            try:
                return transact_write_items(self, transact_items, *args, **kwargs)
            except Exception:
                for table, hash_value, range_value, before in reversed(saved):
                    if table.has_range_key:
                        rows = table.items[hash_value]
                        if before is None:
                            rows.pop(range_value, None)
                        else:
                            rows[range_value] = before
                        if not rows:
                            table.items.pop(hash_value, None)
                    elif before is None:
                        table.items.pop(hash_value, None)
                    else:
                        table.items[hash_value] = before
                for table, records in streams.values():
                    del table.stream_shard.items[records:]
                raise

        return transact

    _wrap(models.DynamoDBBackend, "transact_write_items", in_place)


# The single-item writes DynamoDB refuses while a transaction works on their item.
_CONFLICTING_WRITES = ("put_item", "update_item", "delete_item")


@_patch("dynamodb-transaction-conflict")
def _dynamodb_transaction_conflict():
    from moto.dynamodb.exceptions import (
        ERROR_TYPE_PREFIX,
        DynamodbException,
        TransactionCanceledException,
    )
    from moto.dynamodb.responses import DynamoHandler

    message = "Transaction is ongoing for the item"

    def known_table(self, name):
        # A request to a table that does not exist gets moto's own answer, as on AWS.
        return name in self.dynamodb_backend.tables

    def refusing_write(write):
        def answer(self, *args, **kwargs):
            if known_table(self, self.body.get("TableName")) and fault_rate(
                "dynamodb-transaction-conflict"
            ):
                raise DynamodbException(ERROR_TYPE_PREFIX + "TransactionConflictException", message)
            return write(self, *args, **kwargs)

        return answer

    def cancelling(transact_write_items):
        def answer(self, *args, **kwargs):
            items = self.body.get("TransactItems")
            tables = [next(iter(item.values()), {}).get("TableName") for item in items or []]
            if (
                tables
                and all(known_table(self, name) for name in tables)
                and fault_rate("dynamodb-transaction-conflict")
            ):
                with _fault_lock:
                    ongoing = _fault_random.randrange(len(tables))
                reasons = [(None, None, None)] * len(tables)
                reasons[ongoing] = ("TransactionConflict", message, None)
                raise TransactionCanceledException(reasons)
            return transact_write_items(self, *args, **kwargs)

        return answer

    for action in _CONFLICTING_WRITES:
        _wrap(DynamoHandler, action, refusing_write)
    _wrap(DynamoHandler, "transact_write_items", cancelling)


@_patch("dynamodb-query-cost")
def _dynamodb_query_cost():
    from moto.dynamodb.models.table import Table

    def partition_only(query):
        def run(self, hash_key, *args, **kwargs):
            index_name = args[6] if len(args) > 6 else kwargs.get("index_name")
            if index_name:
                # An index's candidates are sorted by the query itself: no need to sort them all.
                def candidates():
                    return [
                        item
                        for rows in self.items.values()
                        for item in (rows.values() if self.range_key_attr else [rows])
                    ]
            else:

                def candidates():
                    rows = self.items.get(hash_key)
                    if rows is None:
                        return []
                    return list(rows.values()) if self.range_key_attr else [rows]

            # Under dynamodb-atomic-writes' lock: no other request sees this instance attribute.
            self.all_items = candidates
            try:
                return query(self, hash_key, *args, **kwargs)
            finally:
                del self.all_items

        return run

    _wrap(Table, "query", partition_only)


# (bucket, key, deleted version id) -> id of the version of that key just older, None if none.
_deleted_versions: dict = {}


@_patch("dynamodb-expression-cost")
def _dynamodb_expression_cost():
    import copy
    from collections import deque

    from moto.dynamodb.comparisons import ConditionExpressionParser
    from moto.dynamodb.models import dynamo_type
    from moto.dynamodb.parsing import ast_nodes, validators
    from moto.dynamodb.parsing.expressions import UpdateExpressionParser

    parse = UpdateExpressionParser.make
    parsed = {}

    def make(cls, expression):
        tree = parsed.get(expression)
        if tree is None:
            tree = parse(expression)
            if len(parsed) >= 1024:  # an application's expressions are few; a bound all the same
                parsed.clear()
            parsed[expression] = tree
        return tree

    UpdateExpressionParser.make = classmethod(make)

    # The validator's copy of a kept tree: node by node, as deepcopy would, minus its pickling.
    nodes = ast_nodes.Node
    scalars = (str, int, float, bool, bytes, type(None))

    def copy_tree(value, memo=None):
        memo = {} if memo is None else memo
        kind = type(value)
        if kind in scalars:
            return value
        if id(value) in memo:
            return memo[id(value)]
        if kind is list:
            copied = memo[id(value)] = []
            copied.extend(copy_tree(entry, memo) for entry in value)
            return copied
        if kind is dict:
            copied = memo[id(value)] = {}
            for key, entry in value.items():
                copied[key] = copy_tree(entry, memo)
            return copied
        if kind is tuple:
            return tuple(copy_tree(entry, memo) for entry in value)
        if isinstance(value, nodes) and "__deepcopy__" not in vars(kind):
            copied = memo[id(value)] = kind.__new__(kind)
            for name, entry in vars(value).items():
                setattr(copied, name, copy_tree(entry, memo))
            return copied
        return copy.deepcopy(value, memo)

    validators.deepcopy = copy_tree

    def project(self, projection_expressions):
        plain = self.to_regular_json()
        result = {}
        for expression in projection_expressions:
            dynamo_type.merge_dicts(result, dynamo_type.find_nested_key(expression, plain))
        return dynamo_type.Item(
            hash_key=self.hash_key,
            range_key=self.range_key,
            attrs=dynamo_type.serializer.serialize(result)["M"],
        )

    dynamo_type.Item.project = project

    # A ConditionExpression's tokens, by its text: the parse that follows reads names and values.
    lex = ConditionExpressionParser._lex_condition_expression
    lexed = {}

    def lex_once(self):
        text = self.condition_expression
        tokens = lexed.get(text)
        if tokens is None:
            tokens = tuple(lex(self))  # immutable nodes: every later step builds new ones
            if len(lexed) >= 1024:
                lexed.clear()
            lexed[text] = tokens
        return deque(tokens)

    ConditionExpressionParser._lex_condition_expression = lex_once


def _listing_order(bucket):
    """Every version and delete marker in the order moto's list_object_versions walks them."""
    from moto.core.utils import unix_time_millis

    entries = [version for _, versions in bucket.keys.iterlists() for version in versions]
    entries.sort(key=lambda entry: (entry.name, -unix_time_millis(entry.last_modified)))
    return [(entry.name, str(entry.version_id)) for entry in entries]


def _start_after(bucket, key_marker, version_id_marker, delimiter):
    """The (key, version id) S3 starts listing after, as moto needs it; (None, None): the start."""
    order = _listing_order(bucket)
    start = None
    if version_id_marker:
        version, seen = version_id_marker, set()
        while version is not None and version is not _MISSING and version not in seen:
            if (key_marker, version) in order:
                if version == version_id_marker:
                    return key_marker, version_id_marker  # moto resumes after it correctly
                start = order.index((key_marker, version))  # an older version: list from it
                break
            seen.add(version)
            version = _deleted_versions.get((bucket.name, key_marker, version), _MISSING)
    if start is None:  # after every version of key_marker (and of the prefix it rolls up)
        rolled_up = bool(delimiter) and key_marker.endswith(delimiter)
        start = next(
            (
                index
                for index, (name, _) in enumerate(order)
                if name > key_marker and not (rolled_up and name.startswith(key_marker))
            ),
            len(order),
        )
    return order[start - 1] if start > 0 else (None, None)


@_patch("s3-version-markers")
def _s3_version_markers():
    from moto.s3.models import S3Backend

    def markers_as_s3(list_object_versions):
        def listing(self, bucket_name, delimiter=None, key_marker=None, max_keys=1000,
                    prefix="", version_id_marker=None):  # fmt: skip
            if key_marker:
                bucket = self.get_bucket(bucket_name)
                key_marker, version_id_marker = _start_after(
                    bucket, key_marker, version_id_marker, delimiter
                )
            return list_object_versions(
                self,
                bucket_name,
                delimiter=delimiter,
                key_marker=key_marker,
                max_keys=max_keys,
                prefix=prefix,
                version_id_marker=version_id_marker,
            )

        return listing

    def remembering(delete_object):
        def delete(self, bucket_name, key_name, version_id=None, *args, **kwargs):
            older = _MISSING
            if version_id is not None:
                versions = self.get_bucket(bucket_name).keys.getlist(key_name, [])
                ids = [str(version.version_id) for version in versions]  # oldest first
                if str(version_id) in ids:
                    index = ids.index(str(version_id))
                    older = ids[index - 1] if index > 0 else None
            result = delete_object(self, bucket_name, key_name, version_id, *args, **kwargs)
            if older is not _MISSING and result[0]:
                _deleted_versions[(bucket_name, key_name, str(version_id))] = older
            return result

        return delete

    _wrap(S3Backend, "list_object_versions", markers_as_s3)
    _wrap(S3Backend, "delete_object", remembering)


# The bucket a ListObjectVersions of this thread sees (the keys under its prefix), while it runs.
_listing_view = threading.local()


class _KeysUnder:
    """A bucket's versioned key store, seen through a prefix (the calls listings make)."""

    def __init__(self, keys, prefix):
        self._keys, self._prefix = keys, prefix

    def iterlists(self):
        return ((key, versions) for key, versions in self._keys.iterlists()
                if key.startswith(self._prefix))  # fmt: skip

    def getlist(self, key, default=None):
        return self._keys.getlist(key, default)


class _BucketUnder:
    """A bucket whose keys are those under a prefix; everything else is the bucket's own."""

    def __init__(self, bucket, prefix):
        self._bucket, self.keys = bucket, _KeysUnder(bucket.keys, prefix)

    def __getattr__(self, name):
        return getattr(self._bucket, name)


@_patch("s3-list-versions-cost")
def _s3_list_versions_cost():
    from moto.s3.models import S3Backend

    def under_prefix(list_object_versions):
        def listing(self, bucket_name, delimiter=None, key_marker=None, max_keys=1000,
                    prefix="", version_id_marker=None):  # fmt: skip
            _listing_view.bucket = _BucketUnder(self.get_bucket(bucket_name), prefix or "")
            try:
                return list_object_versions(
                    self,
                    bucket_name,
                    delimiter=delimiter,
                    key_marker=key_marker,
                    max_keys=max_keys,
                    prefix=prefix,
                    version_id_marker=version_id_marker,
                )
            finally:
                _listing_view.bucket = None

        return listing

    def viewed(get_bucket):
        def get(self, bucket_name, *args, **kwargs):
            view = getattr(_listing_view, "bucket", None)
            if view is not None and view.name == bucket_name:
                return view
            return get_bucket(self, bucket_name, *args, **kwargs)

        return get

    _wrap(S3Backend, "list_object_versions", under_prefix)
    _wrap(S3Backend, "get_bucket", viewed)


@_patch("s3-list-objects-cost")
def _s3_list_objects_cost():
    from moto.s3.models import FakeDeleteMarker, FakeTableStorageBucket, S3Backend

    def page_only(list_objects_v2):
        def listing(self, bucket, prefix, delimiter, continuation_token, start_after, max_keys):
            asked = (bucket, prefix, delimiter, continuation_token, start_after, max_keys)
            after = (
                self._pagination_tokens.get(continuation_token) if continuation_token else start_after
            )
            unknown_token = continuation_token and after is None
            if delimiter or unknown_token or isinstance(bucket, FakeTableStorageBucket):
                return list_objects_v2(self, *asked)
            under, store = prefix or "", bucket.keys
            # A copy of the names: other requests' threads add and remove keys meanwhile.
            names = sorted(name for name in list(dict.keys(store))
                           if name.startswith(under) and (not after or name > after))  # fmt: skip
            page = []
            for name in names:
                key = store.get(name)
                if key is None or isinstance(key, FakeDeleteMarker):
                    continue
                page.append(key)
                if len(page) > max_keys:  # one more than the page says whether it is truncated
                    break
            return self._truncate_result(page, max_keys)

        return listing

    _wrap(S3Backend, "list_objects_v2", page_only)


_s3_lock = threading.RLock()


@_patch("s3-serial-requests")
def _s3_serial_requests():
    from moto.s3.responses import S3Response

    def one_at_a_time(respond):
        def call(self, *args, **kwargs):
            with _s3_lock:  # reentrant: a handler may hand over to another (ambiguous_response)
                return respond(self, *args, **kwargs)

        return call

    for name in ("bucket_response", "key_response"):
        _wrap(S3Response, name, one_at_a_time)


@_patch("s3-delete-objects-malformed-xml")
def _s3_delete_objects_malformed_xml():
    from moto.s3.exceptions import MalformedXML
    from moto.s3.responses import S3Response

    def malformed_as_400(delete_keys):
        def delete(self, *args, **kwargs):
            try:
                return delete_keys(self, *args, **kwargs)
            except ExpatError:
                raise MalformedXML() from None

        return delete

    _wrap(S3Response, "_bucket_response_delete_keys", malformed_as_400)


_EMPTY_PAGE = "lethe-empty-page."


def _empty_page_mark(state):
    """A continuation token (or version-id marker) that holds where the listing goes on."""
    return _EMPTY_PAGE + base64.urlsafe_b64encode(json.dumps(state).encode()).decode()


def _empty_page_state(mark):
    """What a mark of _empty_page_mark holds; None when the value is S3's own (or absent)."""
    if not mark or not mark.startswith(_EMPTY_PAGE):
        return None
    return json.loads(base64.urlsafe_b64decode(mark[len(_EMPTY_PAGE):]))


def _asked_as(query, state, fields):
    """Puts back in the query the fields (name, state key) of the request that began the run."""
    for name, key in fields:
        query.pop(name, None)
        if state.get(key):
            query[name] = [state[key]]


@_patch("s3-empty-truncated-pages")
def _s3_empty_truncated_pages():
    from moto.core.responses import ActionResult
    from moto.s3.responses import S3Response

    mode = "s3-empty-truncated-pages"

    def objects_with_empty_pages(list_objects_v2):
        def listing(self):
            pages, query = fault_size(mode), self.querystring
            state = _empty_page_state(query.get("continuation-token", [None])[0]) or {
                "served": 0,
                "token": query.get("continuation-token", [None])[0],
                "after": query.get("start-after", [None])[0],
            }
            if state["served"] >= pages:
                _asked_as(query, state, (("continuation-token", "token"), ("start-after", "after")))
                return list_objects_v2(self)
            bucket = self.backend.get_bucket(self.bucket_name)
            prefix = self._get_querystring(self.request, self.uri).get("prefix", [None])[0] or ""
            encoding = query.get("encoding-type", [None])[0]
            delimiter = query.get("delimiter", [None])[0]
            result = {
                "Name": bucket.name,
                "Prefix": urllib.parse.quote(prefix) if encoding == "url" else prefix,
                "MaxKeys": int(query.get("max-keys", ["1000"])[0]),
                "KeyCount": 0,
                "IsTruncated": True,
                "Contents": [],
                "NextContinuationToken": _empty_page_mark({**state, "served": state["served"] + 1}),
            }
            if delimiter:
                result.update(Delimiter=delimiter, CommonPrefixes=[])
            if encoding:
                result["EncodingType"] = encoding
            self.data["Action"] = "ListObjectsV2"
            return self.serialized(ActionResult(result))

        return listing

    def versions_with_empty_pages(list_object_versions):
        def listing(self):
            pages, query = fault_size(mode), self.querystring
            asked_key = query.get("key-marker", [None])[0]
            asked_version = query.get("version-id-marker", [None])[0]
            state = _empty_page_state(asked_version) or {
                "served": 0,
                "key": asked_key,
                "version": asked_version,
            }
            prefix = self._get_querystring(self.request, self.uri).get("prefix", [""])[0] or ""
            # The key the empty page stopped at: the one asked for, or the prefix at the start.
            next_key = state["key"] or prefix
            if state["served"] >= pages or not next_key:
                _asked_as(query, state, (("key-marker", "key"), ("version-id-marker", "version")))
                return list_object_versions(self)
            bucket = self.backend.get_bucket(self.bucket_name)
            result = {
                "Name": bucket.name,
                "Prefix": prefix,
                "Delimiter": query.get("delimiter", [None])[0],
                "KeyMarker": asked_key or "",
                "VersionIdMarker": asked_version or "",
                "MaxKeys": int(query.get("max-keys", ["1000"])[0]),
                "IsTruncated": True,
                "Versions": [],
                "DeleteMarkers": [],
                "NextKeyMarker": next_key,
                "NextVersionIdMarker": _empty_page_mark({**state, "served": state["served"] + 1}),
            }
            self.data["Action"] = "ListObjectVersions"
            return self.serialized(ActionResult(result))

        return listing

    if fault_size(mode) > 0:
        _wrap(S3Response, "list_objects_v2", objects_with_empty_pages)
        _wrap(S3Response, "list_object_versions", versions_with_empty_pages)


_receive_lock = threading.Lock()


def _until_next_available(queue):
    """Seconds until the queue's next delayed or in-flight message can be received."""
    from moto.core.utils import unix_time_millis

    now = unix_time_millis()
    due = [
        max(message.delayed_until, message.visible_at)
        for message in list(queue._messages)
        if message.delayed or not message.visible
    ]
    return max(0.01, (min(due) - now) / 1000) if due else 1


@_patch("sqs-receive-lock")
def _sqs_receive_lock():
    from moto.sqs.models import SQSBackend

    def one_at_a_time(receive_message):
        def receive(self, queue_name, count, wait_seconds_timeout, *args, **kwargs):
            deadline = time.time() + (wait_seconds_timeout or 0)
            while True:
                with _receive_lock:  # one pass over the queue, without waiting
                    messages = receive_message(self, queue_name, count, 0, *args, **kwargs)
                remaining = deadline - time.time()
                if messages or remaining <= 0:
                    return messages
                queue = self.get_queue(queue_name)
                queue.wait_for_messages(min(1, remaining, _until_next_available(queue)))

        return receive

    _wrap(SQSBackend, "receive_message", one_at_a_time)


def _exit_with_parent(interval=0.5):
    """Exits, at once and without cleanup, when the process that started this one has gone.

    A SIGKILL gives the parent no chance to stop its children, and Linux's PR_SET_PDEATHSIG
    is Linux's alone. But a process whose parent has gone is handed to another (init, or a
    subreaper), so its parent id changes: a daemon thread watches for that.
    """
    if os.environ.get("LETHE_MOTO_EXIT_WITH_PARENT") != "1":
        return
    parent = os.getppid()

    def watch():
        while os.getppid() == parent:
            time.sleep(interval)
        os._exit(0)

    threading.Thread(target=watch, name="lethe-exit-with-parent", daemon=True).start()


def main(argv):
    _exit_with_parent()
    if not moto.__version__.startswith(MOTO_SERIES):
        sys.stderr.write(
            f"lethe_moto: written for moto {MOTO_SERIES}x, found moto {moto.__version__}; "
            "its patches may not apply (test/integration/emulator-fixes.test.ts checks them)\n"
        )
    for name, apply in _PATCHES:
        try:
            apply()
        except Exception:  # this moto differs: say so and run without this patch
            sys.stderr.write(f"lethe_moto: patch {name} not applied:\n{traceback.format_exc()}")
    _say_where(argv)
    server.main(argv)


def _say_where(argv):
    """One line on stderr before serving: where, which moto, which fault modes (the request log
    is off, see server-dispatch-cost, so a launcher started by hand would say nothing else)."""
    host, port = "127.0.0.1", "5000"
    for flag, value in zip(argv, argv[1:]):
        if flag in ("-H", "--host"):
            host = value
        elif flag in ("-p", "--port"):
            port = value
    faults = f", fault modes {json.dumps(_FAULTS)}" if _FAULTS else ""
    sys.stderr.write(
        f"lethe_moto: moto {moto.__version__} with {len(_PATCHES)} patches on http://{host}:{port}{faults}\n"
    )
    sys.stderr.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
