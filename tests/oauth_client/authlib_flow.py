#!/usr/bin/env python3
"""A complete OAuth 2.0 flow against a running workapi server, driven by a third-party client
library (Authlib's requests integration), as an integration would do it:

discovery -> dynamic registration (RFC 7591) -> PKCE S256 authorization (the consent form is
posted with requests, the redirect read from its Location) -> code for tokens -> an API call
with the access token -> refresh (rotation: the old refresh token is refused afterwards) ->
revocation (RFC 7009). Once for a public client (`none`) and once for a confidential client
(`client_secret_basic`).

    python3 tests/oauth_client/authlib_flow.py http://127.0.0.1:3000 admin@demo.example <password>

The password may also come from LT_OAUTH_TEST_PASSWORD. Exits non-zero on the first failure.
scripts/test.sh runs it against the local server it starts.
"""

import html.parser
import os
import sys
import urllib.parse

# The local server speaks plain http on 127.0.0.1; Authlib refuses that unless told.
os.environ.setdefault("AUTHLIB_INSECURE_TRANSPORT", "1")

import requests  # noqa: E402
from authlib.common.security import generate_token  # noqa: E402
from authlib.integrations.base_client.errors import OAuthError  # noqa: E402
from authlib.integrations.requests_client import OAuth2Session  # noqa: E402

REDIRECT_URI = "http://127.0.0.1:8976/callback"


class FormReader(html.parser.HTMLParser):
    """The consent page's form: its action and its input fields."""

    def __init__(self):
        super().__init__()
        self.action = None
        self.fields = {}
        self.in_form = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self.in_form = True
            self.action = attrs.get("action")
        elif tag == "input" and self.in_form and attrs.get("name"):
            self.fields[attrs["name"]] = attrs.get("value") or ""

    def handle_endtag(self, tag):
        if tag == "form":
            self.in_form = False


def check(condition, message):
    if not condition:
        raise SystemExit(f"FAILED: {message}")


def flow(base, email, password, auth_method):
    metadata = requests.get(f"{base}/api/.well-known/oauth-authorization-server", timeout=10).json()
    check("S256" in metadata["code_challenge_methods_supported"], f"S256 advertised: {metadata}")
    name = f"Authlib flow ({auth_method}) {generate_token(6)}"
    registered = requests.post(
        metadata["registration_endpoint"],
        json={"client_name": name, "redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": auth_method},
        timeout=10,
    )
    check(registered.status_code == 201, f"registration: {registered.status_code} {registered.text}")
    client_info = registered.json()

    client = OAuth2Session(
        client_id=client_info["client_id"],
        client_secret=client_info.get("client_secret"),
        scope="api:read api:write",
        redirect_uri=REDIRECT_URI,
        code_challenge_method="S256",
        token_endpoint_auth_method=auth_method,
    )
    verifier = generate_token(64)
    url, state = client.create_authorization_url(metadata["authorization_endpoint"], code_verifier=verifier)

    # The user's part: the consent page, signed in and approved.
    page = requests.get(url, timeout=10)
    check(page.status_code == 200, f"consent page: {page.status_code} {page.text[:300]}")
    check(name in page.text, "the page names the client")
    form = FormReader()
    form.feed(page.text)
    check(form.action, "the page has a form")
    fields = dict(form.fields, email=email, password=password, decision="approve")
    approved = requests.post(form.action, data=fields, allow_redirects=False, timeout=30)
    check(approved.status_code == 302, f"approval: {approved.status_code} {approved.text[:300]}")
    location = approved.headers["Location"]
    check(location.startswith(REDIRECT_URI + "?"), f"back at the redirect URI: {location}")

    token = client.fetch_token(
        metadata["token_endpoint"], authorization_response=location, state=state, code_verifier=verifier
    )
    check(token["token_type"].lower() == "bearer", f"token type: {token}")
    check(token["access_token"].startswith("lt_oat_"), "an OAuth access token")
    check(token["scope"] == "api:read api:write", f"scope: {token}")

    listed = client.get(f"{base}/tags/task", timeout=10)
    check(listed.status_code == 200, f"API call with the access token: {listed.status_code} {listed.text}")

    old_refresh = token["refresh_token"]
    refreshed = client.refresh_token(metadata["token_endpoint"], refresh_token=old_refresh)
    check(refreshed["refresh_token"] != old_refresh, "the refresh token rotates")
    listed = client.get(f"{base}/tags/task", timeout=10)
    check(listed.status_code == 200, f"API call after the refresh: {listed.status_code}")

    try:
        client.refresh_token(metadata["token_endpoint"], refresh_token=old_refresh)
        check(False, "the superseded refresh token was accepted")
    except OAuthError as e:
        check(e.error == "invalid_grant", f"superseded refresh token: {e.error}")

    # (Right after a refresh, that reuse is taken for a concurrent duplicate: refused, grant
    # kept.) Revoking the current refresh token revokes the grant with its access tokens.
    revoked = client.revoke_token(
        metadata["revocation_endpoint"], token=refreshed["refresh_token"], token_type_hint="refresh_token"
    )
    check(revoked.status_code == 200, f"revocation: {revoked.status_code} {revoked.text}")
    listed = client.get(f"{base}/tags/task", timeout=10)
    check(listed.status_code == 401, f"the revoked grant's access token: {listed.status_code}")
    print(f"ok: authlib {auth_method} flow ({client_info['client_id']})")


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    base = sys.argv[1].rstrip("/")
    email = sys.argv[2]
    password = sys.argv[3] if len(sys.argv) > 3 else os.environ.get("LT_OAUTH_TEST_PASSWORD")
    check(password, "a password (argument or LT_OAUTH_TEST_PASSWORD)")
    check(urllib.parse.urlsplit(base).scheme in ("http", "https"), f"a base URL: {base}")
    for method in ("none", "client_secret_basic"):
        flow(base, email, password, method)


if __name__ == "__main__":
    main()
