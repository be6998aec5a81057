//! XSS corpus: no active content survives parsing or rendering, for HTML, Markdown, IDoc JSON
//! from an agent, and hostile stored IDoc that bypassed validation. The rendered HTML is parsed
//! back with a real HTML5 parser and every element and attribute is checked against the
//! allow-list of what the renderer may write.

use scraper::Html;
use serde_json::json;
use workapi_richtext::{Doc, Profile, to_html, to_idoc, to_idoc_json};

const HOSTILE: &[&str] = &[
    "<script>alert(1)</script>",
    "<SCRIPT SRC=//evil.example/x.js></SCRIPT>",
    "<scr<script>ipt>alert(1)</scr</script>ipt>",
    "<img src=x onerror=alert(1)>",
    "<img src=\"javascript:alert(1)\" alt=\"a\">",
    "<p onclick=\"alert(1)\" style=\"background:url(javascript:alert(1))\">x</p>",
    "<a href=\"javascript:alert(1)\">x</a>",
    "<a href=\"JaVaScRiPt:alert(1)\">x</a>",
    "<a href=\" javascript:alert(1)\">x</a>",
    "<a href=\"java\tscript:alert(1)\">x</a>",
    "<a href=\"java&#x09;script:alert(1)\">x</a>",
    "<a href=\"&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;alert(1)\">x</a>",
    "<a href=\"&#x6A;avascript&colon;alert(1)\">x</a>",
    "<a href=\"jav&#x0A;ascript:alert(1)\">x</a>",
    "<a href=\"\u{1}javascript:alert(1)\">x</a>",
    "<a href=\"data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==\">x</a>",
    "<a href=\"vbscript:msgbox(1)\">x</a>",
    "<a href=\"https://ok.example\" onmouseover=\"alert(1)\" target=\"_self\" rel=\"opener\">x</a>",
    "<a href='https://ok.example/\"onmouseover=\"alert(1)'>x</a>",
    "<a href=\"https://ok.example/'><script>alert(1)</script>\">x</a>",
    "<p title=\"\"><script>alert(1)</script>\">x</p>",
    "<div data-type=\"callout\" data-icon='\"><script>alert(1)</script>'><p>x</p></div>",
    "<span data-type=\"emoji\" data-icon=\"x\\\" onerror=alert(1)\">e</span>",
    "<svg onload=alert(1)><script>alert(1)</script></svg>",
    "<svg><a xlink:href=\"javascript:alert(1)\"><text>t</text></a></svg>",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
    "<iframe src=\"javascript:alert(1)\"></iframe>",
    "<iframe srcdoc=\"<script>alert(1)</script>\"></iframe>",
    "<object data=\"javascript:alert(1)\"></object><embed src=\"javascript:alert(1)\">",
    "<style>@import 'javascript:alert(1)';</style><link rel=stylesheet href=x>",
    "<template><script>alert(1)</script></template>",
    "<noscript><p title=\"</noscript><img src=x onerror=alert(1)>\"></noscript>",
    "<form action=\"javascript:alert(1)\"><button formaction=javascript:alert(1)>b</button><input onfocus=alert(1) autofocus></form>",
    "<meta http-equiv=\"refresh\" content=\"0;url=javascript:alert(1)\">",
    "<base href=\"javascript:alert(1)//\">",
    "<table background=\"javascript:alert(1)\"><tr><td onclick=alert(1) colspan=\"2 onclick=alert(1)\">x</td></tr></table>",
    "<ol start=\"1 onclick=alert(1)\"><li>x</li></ol>",
    "<p>unbalanced <b><i>tags</b></i> <a href=\"https://x.example\">open",
    "<<script>script>alert(1)<</script>/script>",
    "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>",
    "<!--<script>alert(1)</script>--><p>x</p>",
    "<![CDATA[<script>alert(1)</script>]]>",
    "<p/onclick=alert(1)>x",
    "<a/href=\"javascript:alert(1)\">x</a>",
    "<div style=\"width:expression(alert(1))\">x</div>",
    "[x](javascript:alert(1))",
    "[x](JAVASCRIPT:alert(1))",
    "[x](<javascript:alert(1)>)",
    "[x](data:text/html,<script>alert(1)</script>)",
    "![x](javascript:alert(1))",
    "<javascript:alert(1)>",
    "[x]: javascript:alert(1)\n\n[link][x]",
    "# Title\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>",
    "```\n<script>alert(1)</script>\n```",
    "> [!NOTE]\n> <iframe src=javascript:alert(1)>",
];

/// Elements and attributes the renderer may write; everything else is a failure.
fn assert_inert(out: &str, context: &str) {
    let lower = out.to_ascii_lowercase();
    assert!(!lower.contains("<script"), "{context}: script in {out}");
    let doc = Html::parse_fragment(out);
    for node in doc.tree.nodes() {
        let Some(el) = node.value().as_element() else { continue };
        let name = el.name();
        let allowed: &[&str] = match name {
            "html" | "body" | "p" | "h1" | "h2" | "h3" | "h4" | "h5" | "h6" | "ul" | "li" | "br" | "hr"
            | "blockquote" | "pre" | "strong" | "em" | "s" | "u" | "code" | "table" | "tbody" | "tr" => &[],
            "ol" => &["start"],
            "th" | "td" => &["colspan", "rowspan", "colwidth"],
            "a" => &["target", "rel", "href"],
            "div" | "span" => &["data-type", "data-icon"],
            other => panic!("{context}: element <{other}> in {out}"),
        };
        for (attr, value) in el.attrs() {
            assert!(allowed.contains(&attr), "{context}: attribute {attr} on <{name}> in {out}");
            match attr {
                "href" => {
                    let url = url::Url::parse(value).unwrap_or_else(|_| panic!("{context}: bad href {value}"));
                    assert!(["http", "https", "mailto"].contains(&url.scheme()), "{context}: href {value}");
                }
                "target" => assert_eq!(value, "_blank"),
                "rel" => assert_eq!(value, "noopener noreferrer nofollow"),
                "start" | "colspan" | "rowspan" => assert!(value.parse::<i64>().is_ok(), "{context}: {attr}={value}"),
                "colwidth" => assert!(value.split(',').all(|w| w.parse::<u32>().is_ok()), "{context}: {value}"),
                "data-type" => assert!(matches!(value, "callout" | "emoji"), "{context}: data-type={value}"),
                "data-icon" => assert!(
                    value.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_+-".contains(&b)),
                    "{context}: data-icon={value}"
                ),
                _ => {}
            }
        }
    }
}

#[test]
fn hostile_html_and_markdown_render_inert() {
    for input in HOSTILE {
        for profile in [Profile::Editor, Profile::Product, Profile::Agent] {
            let doc = to_idoc(input, profile).unwrap_or_else(|e| panic!("{input}: {e}"));
            let out = to_html(&doc);
            assert_inert(&out, &format!("{profile:?} {input}"));
            // And the stored IDoc carries no href but checked ones.
            let json = serde_json::to_string(&doc).unwrap().to_ascii_lowercase();
            assert!(!json.contains("javascript:") || !json.contains("\"href\":\"javascript"), "{input}: {json}");
        }
    }
}

#[test]
fn hostile_text_is_kept_as_text_not_markup() {
    let out = to_html(&to_idoc("<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>", Profile::Editor).unwrap());
    assert_eq!(out, "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>");
    let out = to_html(&to_idoc("```\n<script>alert(1)</script>\n```", Profile::Editor).unwrap());
    assert_eq!(out, "<p><code>&lt;script&gt;alert(1)&lt;/script&gt;</code></p>");
    // a dropped link keeps its text
    assert_eq!(
        to_html(&to_idoc("<a href=\"javascript:alert(1)\">click</a>", Profile::Editor).unwrap()),
        "<p>click</p>"
    );
}

#[test]
fn hostile_idoc_json_is_rejected() {
    let link = |href: &str| {
        json!({"type": "doc", "content": [{"type": "paragraph", "content": [
            {"type": "text", "text": "x", "marks": [{"type": "link", "attrs": {"href": href}}]}]}]})
    };
    for href in [
        "javascript:alert(1)",
        " javascript:alert(1)",
        "java\tscript:alert(1)",
        "data:text/html,x",
        "/rel",
        "//evil.example",
    ] {
        assert!(to_idoc_json(&link(href), Profile::Agent).is_err(), "{href}");
    }
    for bad in [
        json!({"type": "doc", "content": [{"type": "paragraph", "attrs": {"onclick": "alert(1)"}}]}),
        json!({"type": "doc", "content": [{"type": "heading", "attrs": {"level": "1\" onclick=\"alert(1)"}}]}),
        json!({"type": "doc", "content": [{"type": "orderedList", "attrs": {"start": "1 onclick=alert(1)"}, "content": []}]}),
        json!({"type": "doc", "content": [{"type": "html", "text": "<script>alert(1)</script>"}]}),
        json!({"type": "doc", "content": [{"type": "paragraph", "content": [{"type": "text", "text": "x", "marks": [{"type": "script"}]}]}]}),
        json!({"type": "doc", "content": [{"type": "paragraph", "content": [{"type": "emoji", "attrs": {"icon": "\"><script>"}}]}]}),
    ] {
        assert!(to_idoc_json(&bad, Profile::Agent).is_err(), "{bad}");
    }
    // Text that looks like markup is accepted as text and escaped on render.
    let ok = json!({"type": "doc", "content": [{"type": "paragraph", "content": [{"type": "text", "text": "<script>alert(1)</script>"}]}]});
    let out = to_html(&to_idoc_json(&ok, Profile::Agent).unwrap());
    assert_eq!(out, "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>");
}

#[test]
fn hostile_stored_idoc_renders_inert() {
    // A document that never went through validation (e.g. tampered with in the store).
    let raw = json!({"type": "doc", "content": [
        {"type": "paragraph", "content": [
            {"type": "text", "text": "a", "marks": [{"type": "link", "attrs": {"href": "javascript:alert(1)"}}]},
            {"type": "text", "text": "b", "marks": [{"type": "link", "attrs": {"href": "https://x.example/\"><script>alert(1)</script>"}}]},
            {"type": "text", "text": "</p><script>alert(1)</script>"},
            {"type": "emoji", "attrs": {"icon": "\" onerror=\"alert(1)"}}
        ]},
        {"type": "heading", "attrs": {"level": 200}, "content": [{"type": "text", "text": "h"}]},
        {"type": "callout", "attrs": {"icon": "\"><img src=x onerror=alert(1)>"}, "content": []},
        {"type": "table", "content": [{"type": "tableRow", "content": [
            {"type": "tableCell", "attrs": {"colspan": 2, "rowspan": 1, "colwidth": [10]}, "content": []}]}]}
    ]});
    let doc: Doc = serde_json::from_value(raw).unwrap();
    let out = to_html(&doc);
    assert_inert(&out, "stored");
    assert!(out.contains("<p>a"), "the bad link's text is kept: {out}");
}
