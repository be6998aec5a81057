#!/usr/bin/env bash
# The reference page's renderer (docs/conventions.md#the-reference-page): Swagger UI, pinned in
# tools/swagger-ui (package-lock.json holds the tarball's sha512, which `npm ci` checks).
#
#   scripts/vendor-swagger-ui.sh          writes functions/docs/assets/*.gz and SHA256SUMS
#   scripts/vendor-swagger-ui.sh --check  fails unless the committed assets are the pinned files
#
# The assets are committed, so that `cargo build` and `sam build` need no network; the Rust
# test `reference::the_vendored_assets_are_the_pinned_ones` holds the compressed files to
# SHA256SUMS, and --check (run by scripts/test.sh) holds their content to the npm tarball.
set -euo pipefail
cd "$(dirname "$0")/.."
assets=functions/docs/assets
# --ignore-scripts: swagger-ui-dist's dependency @scarf/scarf reports installs from a
# postinstall script; nothing here may call out.
npm ci --prefix tools/swagger-ui --ignore-scripts --no-audit --no-fund --loglevel=error
dist=tools/swagger-ui/node_modules/swagger-ui-dist
files=(swagger-ui-bundle.js swagger-ui.css)
if [ "${1:-}" = --check ]; then
  for file in "${files[@]}"; do
    pinned=$(sha256sum <"$dist/$file" | cut -d' ' -f1)
    vendored=$(gzip -dc "$assets/$file.gz" | sha256sum | cut -d' ' -f1)
    [ "$pinned" = "$vendored" ] || { echo "FAILED: $assets/$file.gz is not $file of the pinned swagger-ui-dist" >&2; exit 1; }
    grep -q "^$pinned  $file\$" "$assets/SHA256SUMS" || { echo "FAILED: SHA256SUMS does not list $file's $pinned" >&2; exit 1; }
  done
  cmp -s "$dist/LICENSE" "$assets/swagger-ui.LICENSE" || { echo "FAILED: $assets/swagger-ui.LICENSE is not the package's" >&2; exit 1; }
  echo "the vendored Swagger UI assets are the pinned swagger-ui-dist $(node -p "require('./$dist/package.json').version")"
  exit 0
fi
: >"$assets/SHA256SUMS"
for file in "${files[@]}"; do
  # -n: no name or time stamp in the header, so the same input gives the same bytes.
  gzip -9 -n -c "$dist/$file" >"$assets/$file.gz"
  (cd "$dist" && sha256sum "$file") >>"$assets/SHA256SUMS"
  (cd "$assets" && sha256sum "$file.gz") >>"$assets/SHA256SUMS"
done
cp "$dist/LICENSE" "$assets/swagger-ui.LICENSE"
cp "$dist/NOTICE" "$assets/swagger-ui.NOTICE"
