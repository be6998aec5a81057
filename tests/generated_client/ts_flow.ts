// The TypeScript client generated from the served document (issue 26): openapi-typescript's
// types for openapi-fetch, type-checked by tsc, then a catalog create, an upload and the
// download of the uploaded file against the local server.
//
// Built and run by scripts/test.sh: <base url> <token> <png file>.
import createClient from "openapi-fetch";
import { readFileSync } from "node:fs";
import type { paths } from "./workapi.js";

const [base, token, png] = process.argv.slice(2);
const client = createClient<paths>({ baseUrl: base, headers: { Authorization: `Bearer ${token}` } });

function check(condition: unknown, what: string): asserts condition {
  if (!condition) {
    throw new Error(what);
  }
}

const categories = await client.GET("/administration/product-catalog/categories");
check(categories.data && categories.data.length > 0, `categories: ${JSON.stringify(categories.error)}`);

const name = `Generated TS product ${Math.random().toString(16).slice(2, 10)}`;
const created = await client.POST("/administration/product-catalog", {
  body: {
    name,
    categoryId: categories.data[0].id,
    description: "Made by the **generated** client",
    priceFixed: 10,
    variants: [{ name: "Standard", description: null }],
    options: [],
  },
});
check(created.data?.name === name, `create: ${created.response.status} ${JSON.stringify(created.error)}`);

const original = readFileSync(png);
const form = new FormData();
form.append("file", new Blob([original], { type: "image/png" }), "logo.png");
const uploaded = await client.POST("/workspace/upload", {
  // openapi-fetch sends FormData as it is (multipart with its boundary).
  body: form as never,
  bodySerializer: (body: unknown) => body as FormData,
});
check(uploaded.response.status === 201 && uploaded.data, `upload: ${uploaded.response.status}`);

const url = new URL(uploaded.data.url);
const downloaded = await client.GET("/workspace/files/{id}/content", {
  params: {
    path: { id: url.pathname.split("/")[3] },
    query: {
      workspace: url.searchParams.get("workspace")!,
      expires: Number(url.searchParams.get("expires")),
      signature: url.searchParams.get("signature")!,
    },
  },
  headers: { Accept: "application/octet-stream" },
  parseAs: "arrayBuffer",
});
check(downloaded.response.status === 200 && downloaded.data, `download: ${downloaded.response.status}`);
check(Buffer.from(downloaded.data as ArrayBuffer).equals(original), "the downloaded bytes are the uploaded ones");
console.log("ok: the generated TypeScript client created a catalog product, uploaded and downloaded a file");
