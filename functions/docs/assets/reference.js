// The reference page at /docs (docs/conventions.md#the-reference-page): Swagger UI over this
// API's own document, every request to this origin (the page's Content-Security-Policy says so).
'use strict';

// The search box matches operations, not only tags as Swagger UI's own filter does: every word
// typed must occur in the operation's method, path, summary, operation id or tag.
function operationSearch() {
  return {
    fn: {
      opsFilter(taggedOps, phrase) {
        const words = String(phrase).toLowerCase().split(/\s+/).filter(Boolean);
        if (words.length === 0) return taggedOps;
        return taggedOps
          .map((tagged, tag) => tagged.set('operations', tagged.get('operations').filter((op) => {
            const text = [tag, op.get('method'), op.get('path'), op.getIn(['operation', 'summary']),
              op.getIn(['operation', 'operationId'])].join(' ').toLowerCase();
            return words.every((word) => text.includes(word));
          })))
          .filter((tagged) => tagged.get('operations').size > 0);
      },
    },
  };
}

// The list of operations in the page gives way to Swagger UI only once its bundle has loaded: a
// page whose scripts did not arrive (or did not run) still lists every operation.
if (typeof SwaggerUIBundle === 'function') {
  document.getElementById('reference-fallback')?.remove();
  const root = document.getElementById('reference');
  const ui = SwaggerUIBundle({
    url: root.dataset.document,
    domNode: root,
    deepLinking: true,
    filter: true,
    plugins: [operationSearch],
    // No call to validator.swagger.io (Swagger UI's default): nothing leaves this origin.
    validatorUrl: null,
    tryItOutEnabled: true,
    displayRequestDuration: true,
    oauth2RedirectUrl: root.dataset.oauthRedirect,
  });
  ui.initOAuth({ usePkceWithAuthorizationCodeGrant: true, scopes: ['api:read', 'api:write'] });

  // Swagger UI labels its filter "Filter by tag"; here it searches operations, and says so. React
  // leaves the attribute alone once set, as its own value never changes.
  const labelSearch = () => {
    const input = root.querySelector('input.operation-filter-input');
    if (!input) return false;
    input.placeholder = 'Search operations: method, path, summary, tag';
    input.setAttribute('aria-label', 'Search operations');
    return true;
  };
  if (!labelSearch()) {
    const observer = new MutationObserver(() => labelSearch() && observer.disconnect());
    observer.observe(root, { childList: true, subtree: true });
  }
}
