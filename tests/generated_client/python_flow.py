"""The Python client that openapi-python-client generates from the served document (issue 26):
a catalog create, an upload and the download of the uploaded file, against the local server.

Usage: python_flow.py <base url> <token> <generated package dir> <png file>
"""

import sys
import uuid
from urllib.parse import parse_qs, urlparse

base, token, package_dir, png = sys.argv[1:5]
sys.path.insert(0, package_dir)

from workapi_client import AuthenticatedClient  # noqa: E402
from workapi_client.api.administration import create_catalog_product, list_catalog_categories  # noqa: E402
from workapi_client.api.workspace import get_file_content, upload_file  # noqa: E402
from workapi_client.models import NewProductBody, UploadForm  # noqa: E402
from workapi_client.types import File  # noqa: E402

client = AuthenticatedClient(base_url=base, token=token)

categories = list_catalog_categories.sync_detailed(client=client)
assert categories.status_code == 200, categories.content
category = categories.parsed[0].id

body = NewProductBody.from_dict({
    "name": f"Generated-client product {uuid.uuid4().hex[:8]}", "categoryId": str(category),
    "description": "Made by the **generated** client", "priceFixed": 10,
    "variants": [{"name": "Standard", "description": None}], "options": [],
})
created = create_catalog_product.sync_detailed(client=client, body=body)
assert created.status_code == 200, created.content
assert created.parsed is not None and created.parsed.name.startswith("Generated-client product"), created.content

with open(png, "rb") as f:
    original = f.read()
uploaded = upload_file.sync_detailed(
    client=client,
    body=UploadForm(file=File(payload=open(png, "rb"), file_name="logo.png", mime_type="image/png")),
)
assert uploaded.status_code == 201, uploaded.content
url = urlparse(uploaded.parsed.url)
query = parse_qs(url.query)
file_id = url.path.split("/")[3]
downloaded = get_file_content.sync_detailed(
    uuid.UUID(file_id), client=client, workspace=uuid.UUID(query["workspace"][0]),
    expires=int(query["expires"][0]), signature=query["signature"][0],
)
assert downloaded.status_code == 200, downloaded.content
assert isinstance(downloaded.parsed, File), type(downloaded.parsed)
assert downloaded.parsed.payload.read() == original, "the downloaded bytes are the uploaded ones"
print("ok: the generated Python client created a catalog product, uploaded and downloaded a file")
