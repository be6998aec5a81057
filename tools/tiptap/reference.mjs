// Tiptap as the differential reference for shared::richtext (see docs/richtext.md).
//
// Reads a JSON array of cases on stdin:
//   { "id": "...", "profile": "editor" | "product" | "agent", "format": "html" | "markdown",
//     "input": "...", "dom": "tiptap" | "parse5" }
// and prints a JSON array of { "id", "doc" } or { "id", "error" } on stdout.
//
// `dom: "tiptap"` runs @tiptap/html's own generateJSON (happy-dom). `dom: "parse5"` builds the
// same happy-dom document node by node from a spec-compliant parse5 tree first, because happy-dom
// mishandles some malformed HTML (stray </p>, the newline after <pre>, misnested tags) and
// browsers, like our html5ever, follow the HTML standard there.
// Markdown is rendered to HTML with markdown-it (CommonMark + GFM tables and strikethrough) and
// then parsed by Tiptap like any HTML, so Markdown cases check our mapping of CommonMark onto
// nodes.
//
// Must be run with `node reference.mjs` (ES module: the server build of @tiptap/html is
// import-only).
import { generateJSON } from '@tiptap/html'
import { getSchema, Node, mergeAttributes } from '@tiptap/core'
import { DOMParser as PMDOMParser } from '@tiptap/pm/model'
import StarterKit from '@tiptap/starter-kit'
import { Table, TableRow, TableHeader, TableCell } from '@tiptap/extension-table'
import { Window } from 'happy-dom'
import { parseFragment, defaultTreeAdapter, html as parse5html } from 'parse5'
import MarkdownIt from 'markdown-it'
import { readFileSync } from 'node:fs'

const LINK_REL = 'noopener noreferrer nofollow'

// The editor profile: StarterKit without the nodes our IDoc does not have (codeBlock) and
// without the editing-only plugins; links carry the forced target and rel as defaults.
const starter = StarterKit.configure({
  codeBlock: false,
  undoRedo: false,
  dropcursor: false,
  gapcursor: false,
  trailingNode: false,
  listKeymap: false,
  link: { openOnClick: false, autolink: false, linkOnPaste: false, HTMLAttributes: { target: '_blank', rel: LINK_REL } },
})

// callout and emoji are not stock Tiptap nodes (the emoji extension is not published at the
// pinned version); these definitions mirror the HTML shape that shared::richtext renders.
const Callout = Node.create({
  name: 'callout',
  group: 'block',
  content: 'block+',
  defining: true,
  addAttributes() {
    return { icon: { default: 'bulb', parseHTML: (el) => el.getAttribute('data-icon'), renderHTML: (a) => ({ 'data-icon': a.icon }) } }
  },
  parseHTML() { return [{ tag: 'div[data-type="callout"]' }] },
  renderHTML({ HTMLAttributes }) { return ['div', mergeAttributes({ 'data-type': 'callout' }, HTMLAttributes), 0] },
})
const Emoji = Node.create({
  name: 'emoji',
  group: 'inline',
  inline: true,
  atom: true,
  addAttributes() {
    return { icon: { default: null, parseHTML: (el) => el.getAttribute('data-icon'), renderHTML: (a) => ({ 'data-icon': a.icon }) } }
  },
  parseHTML() { return [{ tag: 'span[data-type="emoji"]' }] },
  renderHTML({ node, HTMLAttributes }) {
    return ['span', mergeAttributes({ 'data-type': 'emoji' }, HTMLAttributes), `:${node.attrs.icon}:`]
  },
})

const PROFILES = {
  editor: [starter],
  agent: [starter],
  product: [starter, Table, TableRow, TableHeader, TableCell, Callout, Emoji],
}

const markdown = MarkdownIt('commonmark', { html: true }).enable(['table', 'strikethrough'])

// Copy a parse5 tree into a happy-dom document, node by node.
function copyInto(document, p5node, target) {
  for (const child of p5node.childNodes ?? []) {
    if (child.nodeName === '#text') {
      target.appendChild(document.createTextNode(child.value))
    } else if (child.nodeName === '#comment') {
      // comments carry no content
    } else if (child.tagName) {
      const el = document.createElement(child.tagName)
      for (const { name, value } of child.attrs) {
        try { el.setAttribute(name, value) } catch { /* names happy-dom rejects */ }
      }
      // <template> keeps its children in a separate fragment, as in a browser.
      const content = child.tagName === 'template' ? child.content : child
      if (child.tagName !== 'template') copyInto(document, content, el)
      target.appendChild(el)
    }
  }
}

function viaParse5(html, extensions) {
  const window = new Window({ settings: { disableJavaScriptEvaluation: true, disableJavaScriptFileLoading: true, disableCSSFileLoading: true, disableIframePageLoading: true, disableComputedStyleRendering: true } })
  try {
    const body = window.document.createElement('body')
    // Parsed as the content of <body>, as @tiptap/html and our engine do (parse5's default
    // fragment context is <template>, which ignores stray end tags).
    const context = defaultTreeAdapter.createElement('body', parse5html.NS.HTML, [])
    copyInto(window.document, parseFragment(context, html), body)
    return PMDOMParser.fromSchema(getSchema(extensions)).parse(body).toJSON()
  } finally {
    window.happyDOM.abort()
    window.happyDOM.close()
  }
}

function run(c) {
  const extensions = PROFILES[c.profile]
  if (!extensions) throw new Error(`unknown profile ${c.profile}`)
  const html = c.format === 'markdown' ? markdown.render(c.input) : c.input
  return c.dom === 'parse5' ? viaParse5(html, extensions) : generateJSON(html, extensions)
}

const cases = JSON.parse(readFileSync(0, 'utf8'))
const out = cases.map((c) => {
  try {
    return { id: c.id, doc: run(c) }
  } catch (e) {
    return { id: c.id, error: String(e && e.message ? e.message : e) }
  }
})
process.stdout.write(JSON.stringify(out))
