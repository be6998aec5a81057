"""Webhook delivery, end to end, verified by the official Standard Webhooks library
(docs/events.md#delivery; issue 35's Done-when).

Starts `workapi serve` itself (LT_WEBHOOKS_ALLOW_PRIVATE=true, a fresh data directory), and a
receiver on 127.0.0.1 that verifies every request with `standardwebhooks.Webhook`, then:

1. a `tag.created` reaches the receiver within seconds of the create, signed, its webhook-id the
   event's id in GET /events;
2. the same delivery replayed 6 minutes later is rejected by the library (too old);
3. a receiver that fails the first attempt gets a second one with the same webhook-id, and the
   delivery log shows both (503, then 2xx);
4. the metadata address is refused as an endpoint URL;
5. kill -9 of the server in the middle of a burst of creates loses no acknowledged create: after
   a restart on the same data directory, every tag whose create was answered 201 is delivered at
   least once, and any duplicate carries the same webhook-id.

Usage: delivery_flow.py <workapi binary> <scratch directory>
"""

import datetime
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import standardwebhooks
from standardwebhooks import Webhook

BINARY, SCRATCH = sys.argv[1], sys.argv[2]
# The feed's settle window in this server (docs/events.md, "A gapless feed"): short, so the
# flow waits for it without taking the default's 15 s.
SETTLE_SECS = 2


def fail(message):
    print(f"FAILED: {message}", file=sys.stderr)
    sys.exit(1)


class Receiver:
    """Verifies every delivery with the official library; answers 503 to the first attempt of
    each event about a tag named `webhook-retry-…`."""

    def __init__(self):
        self.secret = None
        self.lock = threading.Lock()
        self.verified = []  # (webhook-id, payload, raw body, headers)
        self.rejected = []
        self.seen = {}
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                headers = {k.lower(): v for k, v in self.headers.items()}
                message_id = headers.get("webhook-id", "")
                with receiver.lock:
                    attempt = receiver.seen.get(message_id, 0) + 1
                    receiver.seen[message_id] = attempt
                try:
                    payload = Webhook(receiver.secret).verify(body, headers)
                except standardwebhooks.webhooks.WebhookVerificationError as e:
                    with receiver.lock:
                        receiver.rejected.append((message_id, str(e)))
                    self.send_response(400)
                    self.end_headers()
                    return
                name = str(payload.get("data", {}).get("name", ""))
                if attempt == 1 and name.startswith("webhook-retry-"):
                    self.send_response(503)
                    self.end_headers()
                    return
                with receiver.lock:
                    receiver.verified.append((message_id, payload, body, headers))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks"

    def delivered(self, message_id):
        with self.lock:
            return [v for v in self.verified if v[0] == message_id]

    def wait_for(self, predicate, seconds, what):
        deadline = time.time() + seconds
        while time.time() < deadline:
            with self.lock:
                if predicate():
                    return
            time.sleep(0.1)
        fail(f"{what} within {seconds} s (verified: {len(self.verified)}, rejected: {self.rejected[:3]})")


class Server:
    def __init__(self, data_dir):
        self.data_dir = data_dir
        self.process = None
        self.token = None

    def start(self):
        env = dict(os.environ, LT_WEBHOOKS_ALLOW_PRIVATE="true", LT_RATE_LIMIT_TOKEN="1000000", LT_RATE_LIMIT_IP="1000000",
                   LT_EVENTS_SETTLE_SECS=str(SETTLE_SECS))
        log = open(os.path.join(SCRATCH, "server.log"), "a")
        self.process = subprocess.Popen(
            [BINARY, "--data-dir", self.data_dir, "serve", "--addr", "127.0.0.1:0"],
            env=env, stdout=log, stderr=subprocess.PIPE, text=True,
        )
        for line in self.process.stderr:
            log.write(line)
            log.flush()
            if line.startswith("    ") and self.token is None:
                self.token = line.strip()
            if line.startswith("workapi listening on http://"):
                self.url = line.split()[3]
                break
        else:
            fail("the server did not start; see server.log")
        threading.Thread(target=self._drain, args=(self.process, log), daemon=True).start()

    @staticmethod
    def _drain(process, log):
        for line in process.stderr:
            log.write(line)
            log.flush()

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def call(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Authorization", f"Bearer {self.token}")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null")


def event_of(server, kind, resource_id):
    """The resource's first event in the feed, once it has settled (the server's settle window is
    SETTLE_SECS here; webhooks do not wait for it)."""
    deadline = time.monotonic() + SETTLE_SECS + 5
    while True:
        status, events = server.call("GET", f"/events?resourceKind={kind}&resourceId={resource_id}")
        if status == 200 and events:
            return events[0]
        if status != 200 or time.monotonic() > deadline:
            fail(f"GET /events lists no event of {kind} {resource_id}: {status} {events}")
        time.sleep(0.2)


def main():
    receiver = Receiver()
    server = Server(os.path.join(SCRATCH, "data"))
    server.start()
    status, endpoint = server.call("POST", "/webhooks", {"url": receiver.url, "eventTypes": ["tag.created"], "description": "test receiver"})
    if status != 201:
        fail(f"POST /webhooks answered {status}: {endpoint}")
    receiver.secret = endpoint["secret"]

    # 1. A tag.created within seconds, verified, its webhook-id the event's id.
    started = time.time()
    status, tag = server.call("POST", "/tags/task/create", {"name": f"webhook-{time.time_ns()}"})
    if status not in (200, 201):
        fail(f"POST /tags answered {status}: {tag}")
    # The webhook does not wait for the feed's settle window: it is delivered first.
    receiver.wait_for(lambda: any(v[1]["data"].get("id") == tag["id"] for v in receiver.verified), 10, "a signed tag.created")
    delivered_after = time.time() - started
    event = event_of(server, "tag", tag["id"])
    (message_id, payload, body, headers) = receiver.delivered(event["id"])[0]
    if payload["type"] != "tag.created" or payload["data"]["id"] != tag["id"]:
        fail(f"the delivery is not the tag's event: {payload}")
    print(f"1. tag.created delivered and verified {delivered_after:.2f} s after the create (webhook-id {message_id})")

    # 2. The same request 6 minutes later: the library refuses it as too old.
    real_datetime = standardwebhooks.webhooks.datetime

    class SixMinutesLater(real_datetime):
        @classmethod
        def now(cls, tz=None):
            return real_datetime.now(tz) + datetime.timedelta(minutes=6)

    standardwebhooks.webhooks.datetime = SixMinutesLater
    try:
        Webhook(receiver.secret).verify(body, headers)
        fail("a replay 6 minutes later was accepted")
    except standardwebhooks.webhooks.WebhookVerificationError as e:
        if "too old" not in str(e):
            fail(f"the replay was refused for another reason: {e}")
    finally:
        standardwebhooks.webhooks.datetime = real_datetime
    print("2. the same delivery replayed 6 minutes later is refused by the library: too old")

    # 3. A first failure is retried with the same webhook-id, and both attempts are logged.
    status, failing_tag = server.call("POST", "/tags/task/create", {"name": f"webhook-retry-{time.time_ns()}"})
    failing_event = event_of(server, "tag", failing_tag["id"])
    receiver.wait_for(lambda: any(v[0] == failing_event["id"] for v in receiver.verified), 30, "the retried delivery")
    status, log = server.call("GET", f"/webhooks/{endpoint['id']}/deliveries")
    delivery = next((d for d in log if d["id"] == failing_event["id"]), None)
    if delivery is None:
        fail(f"the delivery log lacks {failing_event['id']}: {log}")
    statuses = [a["responseStatus"] for a in delivery["attempts"]]
    if statuses[:2] != [503, 204] or delivery["status"] != "delivered" or receiver.seen[failing_event["id"]] != 2:
        fail(f"expected a 503 then a 204 for {failing_event['id']}: {delivery}")
    print(f"3. first attempt 503, retried with the same webhook-id, delivered; the log shows {statuses}")

    # 4. The metadata address is never an endpoint.
    status, refused = server.call("POST", "/webhooks", {"url": "http://169.254.169.254/latest/meta-data", "eventTypes": ["tag.created"]})
    if status != 400 or "url" not in (refused.get("errors") or {}):
        fail(f"the metadata address was not refused with a 400 naming url: {status} {refused}")
    print("4. the metadata address is refused as a URL (400, url)")

    # 5. kill -9 in the middle of a burst of creates: 8 clients create tags as fast as the server
    # answers; the server is killed once 60 creates were acknowledged, with others in flight.
    acknowledged, refused = [], []
    lock = threading.Lock()
    stop = threading.Event()

    def create(worker):
        n = 0
        while not stop.is_set():
            n += 1
            try:
                status, tag = server.call("POST", "/tags/task/create", {"name": f"burst-{worker}-{n}-{time.time_ns()}"})
            except Exception:
                return  # the server died under this request: not acknowledged
            if status in (200, 201):
                with lock:
                    acknowledged.append(tag["id"])
            else:
                with lock:
                    refused.append((status, tag))

    threads = [threading.Thread(target=create, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    deadline = time.time() + 60
    while len(acknowledged) < 60 and time.time() < deadline:
        time.sleep(0.01)
    server.kill()
    stop.set()
    for thread in threads:
        thread.join()
    if refused:
        fail(f"creates were refused: {refused[:3]}")
    if len(acknowledged) < 60:
        fail(f"only {len(acknowledged)} creates were acknowledged before the kill")
    killed_with = len(acknowledged)
    server.start()

    def tags_delivered():
        ids = {v[1]["data"]["id"] for v in receiver.verified if v[1]["type"] == "tag.created"}
        return all(tag_id in ids for tag_id in acknowledged)

    receiver.wait_for(tags_delivered, 60, f"every one of the {killed_with} acknowledged creates delivered after the restart")
    with receiver.lock:
        per_tag = {}
        for message_id, payload, _, _ in receiver.verified:
            per_tag.setdefault(payload["data"]["id"], set()).add(message_id)
        burst = {tag_id: per_tag[tag_id] for tag_id in acknowledged}
        deliveries = sum(1 for v in receiver.verified if v[1]["data"]["id"] in burst)
    mixed = [tag_id for tag_id, ids in burst.items() if len(ids) != 1]
    if mixed:
        fail(f"a tag delivered under two webhook-ids: {mixed[:3]}")
    print(
        f"5. kill -9 during a burst of creates by 8 clients: {killed_with} acknowledged, all {killed_with} delivered after the restart "
        f"({deliveries} deliveries, {deliveries - killed_with} duplicates, each with its event's webhook-id)"
    )
    server.kill()


if __name__ == "__main__":
    main()
