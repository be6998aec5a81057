"""Test data for schemathesis that the demo seed cannot hold (tools/schemathesis.toml).

Some operations take an identifier that only the API makes, or data the seed does not hold: a
file's signed URL, an express quotation, a potential invoice's subscription row, a tag, a work
activity, an agent's managed-provider settings, OAuth clients with their registration access
tokens. This script makes them through the API on
the demo workspace, as a client would, and prints `export NAME=value` lines that
tools/schemathesis.toml reads as `${NAME}`:

    eval "$(python3 tools/schemathesis_data.py BASE_URL TOKEN IMAGE)"

The ids of the seed itself (seed/demo*.json: a project, a task, a contact, a category...) are
fixed and written in tools/schemathesis.toml directly.
"""

import json
import time
import shlex
import sys
import urllib.parse
import urllib.request
import uuid

base, token, image = sys.argv[1], sys.argv[2], sys.argv[3]
# seed/demo.json: the web-shop project (express quotations on), its first task, the active
# contact of the project's customer.
PROJECT = "01e53df4-07b4-4a44-8242-85272b83de6a"
TASK = "7c0f3a52-9d4e-4b1a-8e6f-2a3b4c5d6e7f"
CONTACT = "feba6268-1a6d-44ce-bd62-936a18e5d37a"
# seed/demo-agents.json: the first agent.
AGENT = "6b1f3c2a-4d5e-4f60-8a7b-9c0d1e2f3a4b"


def call(method, path, body=None, content_type="application/json"):
    data = json.dumps(body).encode() if content_type == "application/json" and body is not None else body
    request = urllib.request.Request(base + path, data=data, method=method)
    request.add_header("Authorization", f"Bearer {token}")
    if data is not None:
        request.add_header("Content-Type", content_type)
    with urllib.request.urlopen(request) as response:
        return json.load(response)


def upload():
    boundary = uuid.uuid4().hex
    with open(image, "rb") as f:
        content = f.read()
    form = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="logo.png"\r\n'
        f"Content-Type: image/png\r\n\r\n"
    ).encode() + content + f"\r\n--{boundary}--\r\n".encode()
    return call("POST", "/workspace/upload", form, f"multipart/form-data; boundary={boundary}")


exports = {}

# The download: a file and its signed URL's parameters.
file = upload()
query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(file["url"]).query))
exports |= {
    "ST_FILE_ID": file["id"],
    "ST_FILE_WORKSPACE": query["workspace"],
    "ST_FILE_EXPIRES": query["expires"],
    "ST_FILE_SIGNATURE": query["signature"],
}

# An express quotation of the first task, to read, accept and reject.
quotation = call(
    "POST", f"/tasks/{TASK}/express-quotations", {"contactUserId": CONTACT, "includeEstimate": True}
)
exports["ST_QUOTATION_ID"] = quotation["id"]

# A subscription billing, whose first row shows on a potential invoice of the project.
call(
    "POST",
    f"/projects/{PROJECT}/subscription-billings",
    {"manualTitle": "Hosting", "fromDate": "2026-01-01", "toDate": "2026-12-31", "frequency": 1,
     "payment": "fixed", "price": 30},
)
invoices = [i for i in call("GET", "/billing/potential-invoices?responseShape=full") if i["subscriptions"]]
invoice = invoices[0]
exports["ST_INVOICE_ID"] = invoice["id"]
exports["ST_INVOICE_ROW_ID"] = invoice["subscriptions"][0]["billingId"]
# Other months of the same subscription: one to issue, and one issued here, to cancel. The hooks
# (tools/schemathesis_hooks.py) cancel what an issue case issued and issue again for each cancel
# case, through the API at this address with this token.
exports["ST_ISSUE_ID"] = invoices[1]["id"]
exports["ST_CANCEL_SOURCE_ID"] = invoices[2]["id"]
issued = call("POST", f"/billing/potential-invoices/{urllib.parse.quote(invoices[2]['id'], safe='')}/issue")
exports["ST_CANCEL_ID"] = issued["id"]
exports["ST_API_BASE"] = base
exports["ST_API_TOKEN"] = token

# OAuth clients (RFC 7591) to read and update, and one to delete, each with its registration
# access token: the management operations take that token, not the API's.
def register(name):
    body = json.dumps({"redirect_uris": ["https://app.example/callback"], "client_name": name,
                       "token_endpoint_auth_method": "none"}).encode()
    request = urllib.request.Request(base + "/api/oauth/register", data=body, method="POST")
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request) as response:
        client = json.load(response)
    return client["client_id"], client["registration_access_token"]


exports["ST_OAUTH_CLIENT_ID"], exports["ST_OAUTH_RAT"] = register(f"Schemathesis {uuid.uuid4().hex[:8]}")
exports["ST_OAUTH_DELETED_CLIENT_ID"], exports["ST_OAUTH_DELETED_RAT"] = register(f"Deleted {uuid.uuid4().hex[:8]}")

# A webhook endpoint to read, update and rotate, on a loopback receiver (the test command's
# server admits one: LT_WEBHOOKS_ALLOW_PRIVATE=true). Nothing listens there: its deliveries fail
# and are retried, and one of them is the delivery to list and redeliver (below).
exports["ST_WEBHOOK_URL"] = "http://127.0.0.1:9/schemathesis"
endpoint = {"url": exports["ST_WEBHOOK_URL"], "eventTypes": ["tag.created"]}
exports["ST_WEBHOOK_ID"] = call("POST", "/webhooks", endpoint)["id"]
# And one that the delete's cases the hooks give no endpoint of their own may delete.
exports["ST_WEBHOOK_DELETED_ID"] = call("POST", "/webhooks", endpoint)["id"]

# A tag to colour and a work activity to replace (the seed holds none).
exports["ST_TAG_ID"] = call("POST", "/tags/task/create", {"name": "Schemathesis"})["id"]

# The tag's delivery to the endpoint above, made by the server's dispatcher within moments.
for _ in range(100):
    deliveries = call("GET", f"/webhooks/{exports['ST_WEBHOOK_ID']}/deliveries")
    if deliveries:
        exports["ST_DELIVERY_ID"] = deliveries[0]["id"]
        break
    time.sleep(0.1)
else:
    sys.exit("the server made no delivery of the tag's event to the schemathesis endpoint within 10 s")
exports["ST_ACTIVITY_ID"] = call("POST", "/administration/task-settings/activities", {"name": "Schemathesis"})["id"]

# Managed-provider settings of the first agent, to read: the document's own example body.
document = call("GET", "/docs/json")
save = document["paths"]["/agents/{id}/managed-provider"]["post"]["requestBody"]["content"]["application/json"]
example = save.get("example") or document["components"]["schemas"]["SaveManagedProviderBody"]["examples"][0]
call("POST", f"/agents/{AGENT}/managed-provider", example)

for name, value in exports.items():
    print(f"export {name}={shlex.quote(str(value))}")
