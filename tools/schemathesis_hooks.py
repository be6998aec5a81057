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
"""

import os
import re
import uuid

import schemathesis

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


PRINTABLE_KEY = re.compile(r"^[\x20-\x7E]{1,255}$")


@schemathesis.hook
def before_call(ctx, case, kwargs):
    """What a schema cannot ask of generated data, for schema-valid (positive) cases only.

    - An Idempotency-Key is a key per request (docs/conventions.md#idempotency): the generator
      reuses its short keys across bodies, which is the documented 422. In a positive case the
      generated key is replaced by a fresh UUID; a negative case keeps everything it was given.
    - The upload's generated `file` is not an image, and the upload answers 400 (documented):
      replacing it with examples/logo.png made schemathesis's own "negative" cases valid requests
      (ST201 in three CI runs, whatever the case's metadata said), so uploads that succeed come
      from tools/schemathesis_data.py and the generated clients instead.
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
