"""schemathesis hooks for the test command (tools/schemathesis.toml loads this file).

The file download (`getFileContent`, docs/files.md) answers an image's bytes as `image/png`,
`image/jpeg`, `image/webp` or `image/gif`, or as `application/octet-stream` when the client asks
for that. schemathesis validates JSON and YAML by itself and skips every other media type; this
deserializer makes those answers validated too: the bytes must be the image type the response
declares (an octet-stream answer: one of the four, the only files the API stores), the
`Content-Disposition` file name must carry that type's extension, and the value handed on to the
schema check is the body as a string (`ImageBytes`: `type: string, format: binary`).

With `LT_DOWNLOADS_SEEN` set, each validated body appends a line to that file, so the test command
can check that the run did reach a download (scripts/test.sh).

The upload's `file` part declares its media types (`encoding.file.contentType`: PNG, JPEG, WebP,
GIF, the images the API recognises by content): for each, a strategy of real images of that type
is registered below, which schemathesis uses for the part in positive cases only. Its negative
cases keep what they were generated with, so the hooks change nothing that makes them valid.

Issuing a potential invoice and cancelling an invoice consume their state (docs/billing.md): the
second issue of one potential invoice, or the second cancellation of one invoice, is the documented
409, so after the first case every later one would be refused. Each schema-valid case gets state
of its own instead, made through the API as a client would (`fresh_billing_state`): the invoice
an issue case made is cancelled again after it (which frees its lines, so the same potential
invoice can be issued by the next case), and a cancel case gets an invoice issued for it.
"""

import os
import json
import re
import struct
import urllib.error
import urllib.parse
import urllib.request
import uuid
import zlib

import schemathesis
from hypothesis import strategies as st
from schemathesis.core.file_samples import MEDIA_TYPE_FILE_SAMPLES

# The leading bytes of each image type, as workspace::image recognises them.
SIGNATURES = {
    "image/png": lambda data: data.startswith(b"\x89PNG\r\n\x1a\n"),
    "image/jpeg": lambda data: data.startswith(b"\xff\xd8\xff"),
    "image/webp": lambda data: data[:4] == b"RIFF" and data[8:12] == b"WEBP",
    "image/gif": lambda data: data[:6] in (b"GIF87a", b"GIF89a"),
}
EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/webp": "webp", "image/gif": "gif"}


def image_type(data: bytes) -> str | None:
    return next((media for media, matches in SIGNATURES.items() if matches(data)), None)


@schemathesis.deserializer(*SIGNATURES, "application/octet-stream")
def image_bytes(ctx, response):
    declared = response.headers.get("content-type", [""])
    declared = (declared[0] if isinstance(declared, list) else declared).split(";")[0].strip().lower()
    data = response.content
    actual = image_type(data)
    if actual is None:
        raise ValueError(f"{declared} answer of {len(data)} bytes is no PNG, JPEG, WebP or GIF image")
    if declared != "application/octet-stream" and declared != actual:
        raise ValueError(f"declared {declared}, but the bytes are {actual}")
    disposition = response.headers.get("content-disposition", [""])
    disposition = disposition[0] if isinstance(disposition, list) else disposition
    name = re.search(r'filename="[^"]*\.([a-z]+)"', disposition)
    if name is None or name.group(1) != EXTENSIONS[actual]:
        raise ValueError(f"Content-Disposition {disposition!r} does not name a .{EXTENSIONS[actual]} file")
    seen = os.environ.get("LT_DOWNLOADS_SEEN")
    if seen:
        with open(seen, "a", encoding="utf-8") as log:
            log.write(f"{declared} {actual} {len(data)}\n")
    return data.decode("latin-1")


def png(width: int, height: int, shade: int) -> bytes:
    """A grey PNG of width x height pixels (8-bit greyscale, every row unfiltered)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    rows = b"".join(b"\x00" + bytes([shade]) * width for _ in range(height))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


# PNGs of any small size; for the other types, schemathesis's own smallest well-formed file.
IMAGES = {
    "image/png": st.builds(png, st.integers(1, 64), st.integers(1, 64), st.integers(0, 255)),
    **{media: st.just(MEDIA_TYPE_FILE_SAMPLES[media]) for media in ("image/jpeg", "image/webp", "image/gif")},
}
for media, images in IMAGES.items():
    schemathesis.openapi.media_type(media, images)


PRINTABLE_KEY = re.compile(r"^[\x20-\x7E]{1,255}$")


@schemathesis.hook
def before_call(ctx, case, kwargs):
    """What a schema cannot ask of generated data, for schema-valid (positive) cases only.

    - An Idempotency-Key is a key per request (docs/conventions.md#idempotency): the generator
      reuses its short keys across bodies, which is the documented 422. In a positive case the
      generated key is replaced by a fresh UUID; a negative case keeps everything it was given.
    - The invoice issue and cancel and a webhook endpoint's delete consume their state, and an
      OAuth client update must not make two clients identical: see below.
    Bodies are left alone: replacing the upload's generated bytes with an image here made
    schemathesis's own "negative" cases valid requests (ST201 in three CI runs, whatever the
    case's metadata said); the images come from the media-type strategies above instead.
    """
    # Only a case valid in every part: a case made invalid anywhere (its own Idempotency-Key, an
    # unexpected header) must keep what was generated, or it would become a valid request that
    # schemathesis then expects refused (CI saw an upload whose invalid key was replaced: 201).
    meta = case.meta
    # The stateful phase can mark a case positive whose headers hold an undocumented one.
    documented = {"idempotency-key", "authorization", "content-type", "accept"}
    positive = (
        meta is not None
        and meta.generation.mode.name == "POSITIVE"
        and all(component.mode.name == "POSITIVE" for component in meta.components.values())
        and all(name.lower() in documented for name in (case.headers or {}))
    )
    if not positive:
        return
    # A new mapping each time: the generated values may be kept by the generator and shown again.
    key = (case.headers or {}).get("Idempotency-Key")
    if isinstance(key, str) and PRINTABLE_KEY.match(key):
        case.headers = {**case.headers, "Idempotency-Key": str(uuid.uuid4())}
    if operation_id(case) == "cancelInvoice":
        case.path_parameters = {**(case.path_parameters or {}), "id": invoice_to_cancel()}
    if operation_id(case) == "deleteWebhookEndpoint":
        body = {"url": os.environ["ST_WEBHOOK_URL"], "eventTypes": ["tag.created"]}
        status, endpoint = api("POST", "/webhooks", body)
        if status != 201:
            raise RuntimeError(f"an endpoint for a delete case: {status} {endpoint}")
        case.path_parameters = {**(case.path_parameters or {}), "id": endpoint["id"]}
    # Two clients may not hold exactly the same metadata (docs/oauth.md): a generated update
    # often equals a registration the run made, the documented 400. A name of its own keeps it
    # one client's.
    if operation_id(case) == "updateOAuthClient" and isinstance(case.body, dict):
        case.body = {**case.body, "client_name": f"Schemathesis {uuid.uuid4().hex[:8]}"}


@schemathesis.hook
def after_call(ctx, case, response):
    """An invoice an issue case made is cancelled at once, so the next case can issue again; the
    invoice of a cancel case is not used again."""
    if operation_id(case) == "issuePotentialInvoice" and response.status_code == 201:
        invoice = json.loads(response.content).get("id")
        if invoice:
            api("POST", f"/billing/invoices/{invoice}/cancel")
    # Cancelled now, or before (a run again on the same server): the next case needs another.
    cancelled = response.status_code in (201, 409)
    if operation_id(case) == "cancelInvoice" and cancelled and (case.path_parameters or {}).get("id") == BILLING["open"]:
        BILLING["open"] = None


def operation_id(case) -> str | None:
    return case.operation.definition.raw.get("operationId")


# The data tools/schemathesis_data.py made: the API's address and the token it used, the
# potential invoice whose invoices the cancel cases cancel, and the first such invoice.
BILLING = {"open": os.environ.get("ST_CANCEL_ID")}


def api(method: str, path: str, body=None):
    """A call of the API outside the run; a 4xx answer is returned as (status, body), not raised."""
    data = b"" if body is None else json.dumps(body).encode()
    request = urllib.request.Request(os.environ["ST_API_BASE"] + path, data=data, method=method)
    request.add_header("Authorization", f"Bearer {os.environ['ST_API_TOKEN']}")
    if body is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read() or b"null")


def invoice_to_cancel() -> str:
    """An invoice not cancelled yet: the last one issued for the cancel cases, or a new one."""
    if BILLING["open"] is None:
        source = urllib.parse.quote(os.environ["ST_CANCEL_SOURCE_ID"], safe="")
        status, invoice = api("POST", f"/billing/potential-invoices/{source}/issue")
        if status != 201:
            raise RuntimeError(f"issuing an invoice for a cancel case: {status} {invoice}")
        BILLING["open"] = invoice["id"]
    return BILLING["open"]
