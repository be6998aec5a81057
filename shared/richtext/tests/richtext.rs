//! Behaviour of workapi_richtext on small examples: every node, mark and tag alias of DESIGN §5
//! for HTML and Markdown input, profiles, detection, strict IDoc JSON, limits, rendering.

use serde_json::{Value, json};
use workapi_richtext::{Doc, MAX_DEPTH, MAX_INPUT_BYTES, Profile, RichTextError, to_html, to_idoc, to_idoc_json};

const ED: Profile = Profile::Editor;
const PR: Profile = Profile::Product;
const AG: Profile = Profile::Agent;

fn json_of(input: &str, p: Profile) -> Value {
    serde_json::to_value(to_idoc(input, p).unwrap_or_else(|e| panic!("{input:?}: {e}"))).unwrap()
}

/// Input → rendered HTML (the API's round trip: store IDoc, answer HTML).
fn html(input: &str, p: Profile) -> String {
    to_html(&to_idoc(input, p).unwrap_or_else(|e| panic!("{input:?}: {e}")))
}

fn text(t: &str) -> Value {
    json!({"type": "text", "text": t})
}
fn para(content: Vec<Value>) -> Value {
    json!({"type": "paragraph", "content": content})
}
fn doc(content: Vec<Value>) -> Value {
    json!({"type": "doc", "content": content})
}

const A: &str = "<a target=\"_blank\" rel=\"noopener noreferrer nofollow\" href=";

#[test]
fn empty_input_is_one_empty_paragraph() {
    for input in ["", "   ", "\n\n"] {
        assert_eq!(json_of(input, ED), json!({"type": "doc", "content": [{"type": "paragraph"}]}));
    }
    assert_eq!(html("", ED), "<p></p>");
}

#[test]
fn paragraphs_headings_and_rules() {
    assert_eq!(json_of("<p>Hello</p>", ED), doc(vec![para(vec![text("Hello")])]));
    for level in 1..=6 {
        let h = format!("<h{level}>T</h{level}>");
        assert_eq!(
            json_of(&h, ED),
            doc(vec![json!({"type": "heading", "attrs": {"level": level}, "content": [text("T")]})])
        );
        assert_eq!(html(&h, ED), h);
        let md = format!("{} T", "#".repeat(level));
        assert_eq!(html(&md, ED), h);
    }
    assert_eq!(html("<p>a</p><hr><p>b</p>", ED), "<p>a</p><hr><p>b</p>");
    assert_eq!(html("a\n\n---\n\nb", ED), "<p>a</p><hr><p>b</p>");
    assert_eq!(html("<div>x<section>y</section></div>", ED), "<p>x</p><p>y</p>", "unknown blocks are paragraphs");
}

#[test]
fn lists_nested_and_ordered_start() {
    let input = "<ul><li>a<ul><li>b</li></ul></li></ul><ol start=\"4\"><li>c</li></ol>";
    assert_eq!(
        json_of(input, ED),
        doc(vec![
            json!({"type": "bulletList", "content": [{"type": "listItem", "content": [
                para(vec![text("a")]),
                {"type": "bulletList", "content": [{"type": "listItem", "content": [para(vec![text("b")])]}]}
            ]}]}),
            json!({"type": "orderedList", "attrs": {"start": 4}, "content": [{"type": "listItem", "content": [para(vec![text("c")])]}]}),
        ])
    );
    let out = "<ul><li><p>a</p><ul><li><p>b</p></li></ul></li></ul><ol start=\"4\"><li><p>c</p></li></ol>";
    assert_eq!(html(input, ED), out);
    assert_eq!(html("- a\n  - b\n\n4. c", ED), out);
    // start is written only when it is not 1
    assert_eq!(
        json_of("1. x", ED)["content"][0],
        json!({"type": "orderedList", "content": [{"type": "listItem", "content": [para(vec![text("x")])]}]})
    );
    assert_eq!(html("<ol start=\"1\"><li>x</li></ol>", ED), "<ol><li><p>x</p></li></ol>");
    assert_eq!(html("<ol start=\"NaN\"><li>x</li></ol>", ED), "<ol><li><p>x</p></li></ol>");
}

fn li(content: Vec<Value>) -> Value {
    json!({"type": "listItem", "content": content})
}

#[test]
fn a_list_directly_inside_a_list_moves_into_the_item_before() {
    // Google Docs and Word paste nested lists this way (issue 16, item 1).
    let input = "<ul><li>a</li><ul><li>b</li></ul></ul>";
    let inner = json!({"type": "bulletList", "content": [li(vec![para(vec![text("b")])])]});
    assert_eq!(
        json_of(input, ED),
        doc(vec![json!({"type": "bulletList", "content": [li(vec![para(vec![text("a")]), inner])]})])
    );
    assert_eq!(html(input, ED), "<ul><li><p>a</p><ul><li><p>b</p></li></ul></li></ul>");

    let input = "<ol><li>a</li><ol><li>b</li></ol><li>c</li></ol>";
    let inner = json!({"type": "orderedList", "content": [li(vec![para(vec![text("b")])])]});
    assert_eq!(
        json_of(input, ED),
        doc(vec![json!({"type": "orderedList", "content": [
            li(vec![para(vec![text("a")]), inner]),
            li(vec![para(vec![text("c")])]),
        ]})])
    );
    assert_eq!(html(input, ED), "<ol><li><p>a</p><ol><li><p>b</p></li></ol></li><li><p>c</p></li></ol>");

    // Two lists in a row both go into the item; whitespace between them does not matter.
    assert_eq!(
        html("<ul><li>a</li> <ul><li>b</li></ul><ol><li>c</li></ol></ul>", ED),
        "<ul><li><p>a</p><ul><li><p>b</p></li></ul><ol><li><p>c</p></li></ol></li></ul>"
    );
}

#[test]
fn blockquote_and_hard_breaks() {
    assert_eq!(html("<blockquote><p>q</p></blockquote>", ED), "<blockquote><p>q</p></blockquote>");
    assert_eq!(html("> q\n> > r", ED), "<blockquote><p>q</p><blockquote><p>r</p></blockquote></blockquote>");
    assert_eq!(html("<p>a<br>b</p>", ED), "<p>a<br>b</p>");
    assert_eq!(html("a  \nb", ED), "<p>a<br>b</p>");
    assert_eq!(html("a\nb", ED), "<p>a b</p>", "a soft break is a space");
}

#[test]
fn marks_and_their_aliases() {
    for (input, out) in [
        ("<b>x</b>", "<strong>x</strong>"),
        ("<strong>x</strong>", "<strong>x</strong>"),
        ("<span style=\"font-weight: 700\">x</span>", "<strong>x</strong>"),
        ("<i>x</i>", "<em>x</em>"),
        ("<em>x</em>", "<em>x</em>"),
        ("<span style=\"font-style:italic\">x</span>", "<em>x</em>"),
        ("<s>x</s>", "<s>x</s>"),
        ("<del>x</del>", "<s>x</s>"),
        ("<strike>x</strike>", "<s>x</s>"),
        ("<span style=\"text-decoration: line-through\">x</span>", "<s>x</s>"),
        ("<u>x</u>", "<u>x</u>"),
        ("<span style=\"text-decoration:underline\">x</span>", "<u>x</u>"),
        ("<code>x</code>", "<code>x</code>"),
        ("<b style=\"font-weight:normal\">x</b>", "x"),
    ] {
        assert_eq!(html(&format!("<p>{input}</p>"), ED), format!("<p>{out}</p>"), "{input}");
    }
    assert_eq!(html("**b** _i_ ~~s~~ `c`", ED), "<p><strong>b</strong> <em>i</em> <s>s</s> <code>c</code></p>");
    // canonical order link, bold, code, italic, strike, underline, whatever the nesting
    let all = "<p><u><s><i><b><a href=\"https://e.com\">x</a></b></i></s></u></p>";
    assert_eq!(
        json_of(all, ED)["content"][0]["content"][0]["marks"],
        json!([{"type": "link", "attrs": {"href": "https://e.com", "target": "_blank", "rel": "noopener noreferrer nofollow"}},
               {"type": "bold"}, {"type": "italic"}, {"type": "strike"}, {"type": "underline"}])
    );
    assert_eq!(html(all, ED), format!("<p>{A}\"https://e.com\"><strong><em><s><u>x</u></s></em></strong></a></p>"));
    // code excludes every other mark
    assert_eq!(html("<p><b>a<code>c</code></b></p>", ED), "<p><strong>a</strong><code>c</code></p>");
    assert_eq!(html("<p><code><b>c</b></code></p>", ED), "<p><code>c</code></p>");
    // adjacent nodes share mark elements
    assert_eq!(html("<p><b>a<i>b</i></b></p>", ED), "<p><strong>a<em>b</em></strong></p>");
}

#[test]
fn links_are_forced_and_filtered() {
    let out = format!("<p>{A}\"https://example.com\">x</a></p>");
    assert_eq!(
        html("<p><a href=\"https://example.com\" target=\"_self\" rel=\"opener\" class=\"c\">x</a></p>", ED),
        out
    );
    assert_eq!(html("[x](https://example.com)", ED), out);
    assert_eq!(
        html("<p><a href=\"mailto:a@b.example\">m</a></p>", ED),
        format!("<p>{A}\"mailto:a@b.example\">m</a></p>")
    );
    for bad in ["/relative", "//evil.example", "ftp://x.example", "javascript:alert(1)", "data:text/html,x", ""] {
        assert_eq!(html(&format!("<p><a href=\"{bad}\">t</a></p>"), ED), "<p>t</p>", "{bad}");
    }
    // bare URLs stay text (spec: only explicit anchors are links)
    assert_eq!(html("see https://example.com now", ED), "<p>see https://example.com now</p>");
    assert_eq!(
        html("<https://auto.example>", ED),
        format!("<p>{A}\"https://auto.example\">https://auto.example</a></p>")
    );
    // & in an href is escaped in the attribute
    assert_eq!(
        html("<a href=\"https://e.com/?a=1&amp;b=2\">q</a>", ED),
        format!("<p>{A}\"https://e.com/?a=1&amp;b=2\">q</a></p>")
    );
}

#[test]
fn markdown_email_autolinks_are_mailto_links() {
    // CommonMark gives the destination of `<x@example.com>` without its scheme (issue 16, item 2).
    let link = json!({"type": "link", "attrs": {"href": "mailto:x@example.com", "target": "_blank", "rel": "noopener noreferrer nofollow"}});
    assert_eq!(
        json_of("<x@example.com>", ED),
        doc(vec![para(vec![json!({"type": "text", "text": "x@example.com", "marks": [link]})])])
    );
    assert_eq!(html("<x@example.com>", ED), format!("<p>{A}\"mailto:x@example.com\">x@example.com</a></p>"));
    // a URI autolink with the scheme written out is unchanged
    assert_eq!(
        html("<mailto:y@example.com>", ED),
        format!("<p>{A}\"mailto:y@example.com\">mailto:y@example.com</a></p>")
    );
}

#[test]
fn pre_and_fenced_code_keep_lines() {
    // Several lines or significant spaces are rendered as <pre><code>, which keeps them.
    let out = "<pre><code>fn a() {\n    b();\n}</code></pre>";
    assert_eq!(html("<pre><code>fn a() {\n    b();\n}</code></pre>", ED), out);
    assert_eq!(html("```rust\nfn a() {\n    b();\n}\n```", ED), out);
    assert_eq!(html("~~~\nx\n~~~", ED), "<p><code>x</code></p>");
    // and the IDoc is still a paragraph of code-marked lines joined by hardBreak
    let code = json!([{"type": "code"}]);
    assert_eq!(
        json_of("```\na\n  b\n```", ED),
        doc(vec![para(vec![
            json!({"type": "text", "text": "a", "marks": code}),
            json!({"type": "hardBreak", "marks": code}),
            json!({"type": "text", "text": "  b", "marks": code}),
        ])])
    );
    let twice = to_html(&to_idoc(&html("```\na\n  b\n```", ED), ED).unwrap());
    assert_eq!(twice, "<pre><code>a\n  b</code></pre>");
    assert_eq!(html("<pre>plain\n  two</pre>", ED), "<pre><code>plain\n  two</code></pre>");
    assert_eq!(html("    indented\n    code", ED), "<pre><code>indented\ncode</code></pre>");
}

#[test]
fn every_element_the_parser_handles_is_read_as_html() {
    // Before, these were read as Markdown and shown as literal markup (issue 16, item 3).
    let empty = doc(vec![json!({"type": "paragraph"})]);
    for input in [
        "<video>fallback</video>",
        "<audio>fallback</audio>",
        "<canvas>fallback</canvas>",
        "<textarea>x</textarea>",
        "<noscript>x</noscript>",
    ] {
        assert_eq!(json_of(input, ED), empty, "{input}");
        assert_eq!(html(input, ED), "<p></p>", "{input}");
    }
    assert_eq!(json_of("<nav>x</nav>", ED), doc(vec![para(vec![text("x")])]));
    assert_eq!(html("<nav>x</nav>", ED), "<p>x</p>");
    // legend, summary and details end a paragraph, so their words stay apart
    let input = "<fieldset><legend>L</legend>x</fieldset>";
    assert_eq!(json_of(input, ED), doc(vec![para(vec![text("L")]), para(vec![text("x")])]));
    assert_eq!(html(input, ED), "<p>L</p><p>x</p>");
    let input = "<details open ontoggle=\"alert(1)\"><summary>s</summary>d</details>";
    assert_eq!(json_of(input, ED), doc(vec![para(vec![text("s")]), para(vec![text("d")])]));
    assert_eq!(html(input, ED), "<p>s</p><p>d</p>");
    // a type name in code is not a tag
    assert_eq!(html("Returns Vec<Data>", ED), "<p>Returns Vec&lt;Data&gt;</p>");
}

#[test]
fn links_and_marks_in_pre_win_over_its_code() {
    // Text in <pre> is code unless it has marks of its own: a link keeps its href, and bold
    // stays bold, since code excludes both (issue 16, item 5).
    let input = "<pre><a href=\"https://example.com\">x</a></pre>";
    let link = json!({"type": "link", "attrs": {"href": "https://example.com", "target": "_blank", "rel": "noopener noreferrer nofollow"}});
    let code = json!([{"type": "code"}]);
    assert_eq!(
        json_of(input, ED),
        doc(vec![para(vec![json!({"type": "text", "text": "x", "marks": [link.clone()]})])])
    );
    assert_eq!(html(input, ED), format!("<p>{A}\"https://example.com\">x</a></p>"));
    // Lines and indentation with a link among them: written as <pre>, which keeps them.
    let input = "<pre>a\n  <b>b</b> <a href=\"https://example.com\">x  y</a></pre>";
    assert_eq!(
        json_of(input, ED),
        doc(vec![para(vec![
            json!({"type": "text", "text": "a", "marks": code}),
            json!({"type": "hardBreak", "marks": code}),
            json!({"type": "text", "text": "  ", "marks": code}),
            json!({"type": "text", "text": "b", "marks": [{"type": "bold"}]}),
            json!({"type": "text", "text": " ", "marks": code}),
            json!({"type": "text", "text": "x  y", "marks": [link]}),
        ])])
    );
    let out =
        format!("<pre><code>a\n  </code><strong>b</strong><code> </code>{A}\"https://example.com\">x  y</a></pre>");
    assert_eq!(html(input, ED), out);
    assert_eq!(html(&out, ED), out, "and it reads back the same");
    // <code> inside <pre> is code, and still excludes other marks
    assert_eq!(html("<pre><code><b>c</b>\n d</code></pre>", ED), "<pre><code>c\n d</code></pre>");
}

#[test]
fn stored_whitespace_is_what_a_browser_shows() {
    // white-space:pre keeps runs in ProseMirror, but <p> would not show them and a second parse
    // would lose them: stored collapsed, so render and parse agree (issue 16, item 6).
    let input = "<p style=\"white-space:pre\">a  b</p>";
    assert_eq!(json_of(input, ED), doc(vec![para(vec![text("a b")])]));
    assert_eq!(html(input, ED), "<p>a b</p>");
    // its line breaks are kept, as hard breaks
    assert_eq!(html("<p style=\"white-space:pre\">a\n  b</p>", ED), "<p>a<br>b</p>");
    // a leading space in a paragraph the parser opened, a space after a hard break
    assert_eq!(html("<p>a</p> x", ED), "<p>a</p><p>x</p>");
    assert_eq!(html("<p><b>a<br></b> c</p>", ED), "<p><strong>a<br></strong>c</p>");
    // IDoc JSON is stored the same way; code with significant whitespace stays preformatted
    let v = json!({"type": "doc", "content": [
        {"type": "paragraph", "content": [{"type": "text", "text": " a \t b\n"}]},
        {"type": "paragraph", "content": [{"type": "text", "text": "  x", "marks": [{"type": "code"}]}]}
    ]});
    let stored = to_idoc_json(&v, AG).unwrap();
    assert_eq!(
        serde_json::to_value(&stored).unwrap(),
        doc(vec![
            para(vec![text("a b")]),
            para(vec![json!({"type": "text", "text": "  x", "marks": [{"type": "code"}]})])
        ])
    );
    assert_eq!(to_html(&stored), "<p>a b</p><pre><code>  x</code></pre>");
}

#[test]
fn images_become_alt_text_and_whitespace_collapses() {
    assert_eq!(html("<p>see <img src=\"x.png\" alt=\"the diagram\"> here</p>", ED), "<p>see the diagram here</p>");
    assert_eq!(html("![a chart](https://e.com/c.png)", ED), "<p>a chart</p>");
    assert_eq!(html("<p>  a \n\t b  <b> c </b> </p>", ED), "<p>a b <strong>c</strong></p>");
    assert_eq!(html("<p>a&nbsp;&nbsp;b &lt;x&gt; &amp;</p>", ED), "<p>a&nbsp;&nbsp;b &lt;x&gt; &amp;</p>");
}

#[test]
fn tables_in_product_flattened_in_editor() {
    let input = "<table><tr><th colspan=\"2\">H</th></tr><tr><td>a</td><td rowspan=\"2\" colwidth=\"120\">b <b>c</b></td></tr></table>";
    let j = json_of(input, PR);
    assert_eq!(j["content"][0]["type"], "table");
    assert_eq!(j["content"][0]["content"][0]["content"][0]["type"], "tableHeader");
    assert_eq!(
        j["content"][0]["content"][0]["content"][0]["attrs"],
        json!({"colspan": 2, "rowspan": 1, "colwidth": null})
    );
    assert_eq!(
        j["content"][0]["content"][1]["content"][1]["attrs"],
        json!({"colspan": 1, "rowspan": 2, "colwidth": [120]})
    );
    assert_eq!(
        html(input, PR),
        "<table><tbody><tr><th colspan=\"2\"><p>H</p></th></tr><tr><td><p>a</p></td>\
         <td rowspan=\"2\" colwidth=\"120\"><p>b <strong>c</strong></p></td></tr></tbody></table>"
    );
    let md = "| h1 | h2 |\n|----|----|\n| a  | **b** |";
    assert_eq!(
        html(md, PR),
        "<table><tbody><tr><th><p>h1</p></th><th><p>h2</p></th></tr><tr><td><p>a</p></td><td><p><strong>b</strong></p></td></tr></tbody></table>"
    );
    // editor and agent: one paragraph per row, cells separated by " | "
    assert_eq!(html(input, ED), "<p>H</p><p>a | b <strong>c</strong></p>");
    assert_eq!(html(md, ED), "<p>h1 | h2</p><p>a | <strong>b</strong></p>");
    assert_eq!(html("<table><tr><td><p>x</p><p>y</p></td><td>z</td></tr></table>", AG), "<p>x y | z</p>");
}

#[test]
fn column_widths_come_from_the_colgroup() {
    // Google Docs writes a table's widths on <col>, not on the cells (issue 16, item 7).
    let cell = |w: u32, t: &str| json!({"type": "tableCell", "attrs": {"colspan": 1, "rowspan": 1, "colwidth": [w]}, "content": [para(vec![text(t)])]});
    let input = "<table style=\"border:none\"><colgroup><col width=\"100\" /><col width=\"200\" /></colgroup>\
                 <tbody><tr style=\"height:0pt\"><td><p dir=\"ltr\"><span>a</span></p></td><td>b</td></tr></tbody></table>";
    assert_eq!(
        json_of(input, PR),
        doc(vec![
            json!({"type": "table", "content": [{"type": "tableRow", "content": [cell(100, "a"), cell(200, "b")]}]})
        ])
    );
    assert_eq!(
        html(input, PR),
        "<table><tbody><tr><td colwidth=\"100\"><p>a</p></td><td colwidth=\"200\"><p>b</p></td></tr></tbody></table>"
    );
    // A cell gets the widths of the columns it covers, counted on the grid (spans, span="2").
    let input = "<table><colgroup><col width=\"100px\"><col span=\"2\" width=\"50\"></colgroup>\
                 <tr><td colspan=\"2\" rowspan=\"2\">a</td><td>b</td></tr><tr><td>c</td></tr></table>";
    let j = json_of(input, PR);
    let attrs = |r: usize, c: usize| j["content"][0]["content"][r]["content"][c]["attrs"].clone();
    assert_eq!(attrs(0, 0), json!({"colspan": 2, "rowspan": 2, "colwidth": [100, 50]}));
    assert_eq!(attrs(0, 1), json!({"colspan": 1, "rowspan": 1, "colwidth": [50]}));
    assert_eq!(attrs(1, 0), json!({"colspan": 1, "rowspan": 1, "colwidth": [50]}));
    // the cell's own colwidth wins; a percentage is not a pixel width; no widths when flattened
    let input = "<table><colgroup><col width=\"100\"><col width=\"50%\"></colgroup>\
                 <tr><td colwidth=\"70\">a</td><td>b</td></tr></table>";
    assert_eq!(
        html(input, PR),
        "<table><tbody><tr><td colwidth=\"70\"><p>a</p></td><td><p>b</p></td></tr></tbody></table>"
    );
    assert_eq!(html(input, ED), "<p>a | b</p>");
}

#[test]
fn control_characters_never_reach_stored_text_or_output() {
    // Removed (C0, DEL, C1) but for tab, LF, CR; form feed is a space; U+2028/U+2029 are line
    // breaks, so a space in running text and a hard break in <pre> (issue 16, item 7).
    let input = "<p>a\u{1}b\u{7}c\u{2028}d\u{2029}e\u{c}f\u{85}g\u{7f}</p>";
    assert_eq!(json_of(input, ED), doc(vec![para(vec![text("abc d e fg")])]));
    assert_eq!(html(input, ED), "<p>abc d e fg</p>");
    assert_eq!(html("<pre>a\u{2028}  b\u{0}</pre>", ED), "<pre><code>a\n  b</code></pre>");
    assert_eq!(html("a\u{1}b *c\u{2029}d*", ED), "<p>ab <em>c d</em></p>");
    // IDoc JSON too; text left empty is dropped
    let v = json!({"type": "doc", "content": [{"type": "paragraph", "content": [
        {"type": "text", "text": "x\u{1b}\u{2028}y"}, {"type": "text", "text": "\u{1}", "marks": [{"type": "bold"}]}
    ]}]});
    assert_eq!(serde_json::to_value(to_idoc_json(&v, AG).unwrap()).unwrap(), doc(vec![para(vec![text("x y")])]));
    // and a document stored before this rule does not write them either
    let old: Doc = serde_json::from_value(doc(vec![para(vec![text("a\u{1}b\u{2028}c")])])).unwrap();
    assert_eq!(to_html(&old), "<p>ab\nc</p>");
}

#[test]
fn callout_and_emoji_in_product_only() {
    let callout = "<div data-type=\"callout\" data-icon=\"warning\"><p>careful</p></div>";
    assert_eq!(
        json_of(callout, PR),
        doc(vec![json!({"type": "callout", "attrs": {"icon": "warning"}, "content": [para(vec![text("careful")])]})])
    );
    assert_eq!(html(callout, PR), callout);
    assert_eq!(html(callout, ED), "<p>careful</p>");
    assert_eq!(html("> [!TIP]\n> use it", PR), "<div data-type=\"callout\" data-icon=\"bulb\"><p>use it</p></div>");
    assert_eq!(html("> [!TIP]\n> use it", ED), "<blockquote><p>use it</p></blockquote>");
    let emoji = "<p>hi <span data-type=\"emoji\" data-icon=\"smile\">:smile:</span></p>";
    assert_eq!(json_of(emoji, PR)["content"][0]["content"][1], json!({"type": "emoji", "attrs": {"icon": "smile"}}));
    assert_eq!(html(emoji, PR), emoji);
    assert_eq!(html(emoji, ED), "<p>hi :smile:</p>");
    assert_eq!(
        html("nice :tada: at 10:30:00", PR),
        "<p>nice <span data-type=\"emoji\" data-icon=\"tada\">:tada:</span> at 10:30:00</p>"
    );
    assert_eq!(html("nice :tada:", ED), "<p>nice :tada:</p>");
    assert_eq!(html("`:tada:`", PR), "<p><code>:tada:</code></p>");
}

#[test]
fn html_inside_markdown() {
    assert_eq!(html("**bold** and <u>under</u>", ED), "<p><strong>bold</strong> and <u>under</u></p>");
    assert_eq!(
        html("# T\n\n<div>\n<b>raw</b> html\n</div>\n\n- item", ED),
        "<h1>T</h1><p><strong>raw</strong> html</p><ul><li><p>item</p></li></ul>"
    );
    assert_eq!(html("# T\n\n<script>alert(1)</script>\n\ntext", ED), "<h1>T</h1><p>text</p>");
}

#[test]
fn markdown_with_inline_html_is_markdown() {
    // Paragraphs separated by a blank line, and Markdown outside tags, are Markdown; CommonMark
    // then parses the HTML in it (issue 16, item 4).
    let bold = |t: &str| json!({"type": "text", "text": t, "marks": [{"type": "bold"}]});
    let italic = |t: &str| json!({"type": "text", "text": t, "marks": [{"type": "italic"}]});
    assert_eq!(json_of("first\n\n<b>second</b>", ED), doc(vec![para(vec![text("first")]), para(vec![bold("second")])]));
    assert_eq!(html("first\n\n<b>second</b>", ED), "<p>first</p><p><strong>second</strong></p>");
    assert_eq!(json_of("<b>x</b>\n\n*y*", ED), doc(vec![para(vec![bold("x")]), para(vec![italic("y")])]));
    assert_eq!(html("<b>x</b>\n\n*y*", ED), "<p><strong>x</strong></p><p><em>y</em></p>");
    assert_eq!(html("<p>intro</p>\n\n- item", ED), "<p>intro</p><ul><li><p>item</p></li></ul>");
    // HTML with blank lines between its blocks is still HTML
    assert_eq!(html("<p>a *b*</p>\n\n<p>c</p>", ED), "<p>a *b*</p><p>c</p>");
}

#[test]
fn detection_keeps_angle_brackets_as_text() {
    assert_eq!(html("if a < b and c > d", ED), "<p>if a &lt; b and c &gt; d</p>");
    assert_eq!(html("Use Vec<u8> here", ED), "<p>Use Vec&lt;u8&gt; here</p>");
    assert_eq!(html("plain *markdown*", ED), "<p>plain <em>markdown</em></p>");
    assert_eq!(html("<p>plain *html*</p>", ED), "<p>plain *html*</p>");
}

#[test]
fn agent_accepts_idoc_json_as_object_or_string() {
    let v = json!({"type": "doc", "content": [{"type": "paragraph", "content": [
        {"type": "text", "text": "Be ", "marks": [{"type": "italic"}, {"type": "bold"}]},
        {"type": "text", "text": "brief", "marks": [{"type": "link", "attrs": {"href": "https://e.com", "target": "_self", "rel": null, "class": null}}]}
    ]}]});
    let from_object = to_idoc_json(&v, AG).unwrap();
    let from_string = to_idoc(&v.to_string(), AG).unwrap();
    assert_eq!(from_object, from_string);
    let from_json_string = to_idoc_json(&Value::String(v.to_string()), AG).unwrap();
    assert_eq!(from_object, from_json_string);
    assert_eq!(to_html(&from_object), format!("<p><strong><em>Be </em></strong>{A}\"https://e.com\">brief</a></p>"));
    // Markdown and HTML still work for agents
    assert_eq!(html("# Role\n\nYou *help*.", AG), "<h1>Role</h1><p>You <em>help</em>.</p>");
    // objects are IDoc only for agents
    assert!(matches!(to_idoc_json(&v, ED), Err(RichTextError::WrongType(_))));
    assert!(matches!(to_idoc_json(&json!(5), AG), Err(RichTextError::WrongType(_))));
    // outside the agent profile a JSON string is just text
    assert_eq!(json_of(r#"{"type":"doc"}"#, ED)["content"][0]["content"][0]["text"], r#"{"type":"doc"}"#);
}

#[test]
fn idoc_json_is_validated_strictly() {
    let cases: &[(Value, &str)] = &[
        (json!({"type": "doc", "content": []}), "$: doc must not be empty"),
        (json!({"type": "nope", "content": []}), "$.type: must be \"doc\""),
        (json!({"type": "doc", "content": [{"type": "image"}]}), "$.content[0].type: unknown node type \"image\""),
        (
            json!({"type": "doc", "content": [{"type": "table", "content": []}]}),
            "$.content[0].type: table is not allowed in this field",
        ),
        (
            json!({"type": "doc", "content": [{"type": "text", "text": "x"}]}),
            "$.content[0]: text is not allowed here inside doc",
        ),
        (
            json!({"type": "doc", "content": [{"type": "heading", "attrs": {"level": 7}}]}),
            "$.content[0].attrs.level: must be an integer from 1 to 6",
        ),
        (
            json!({"type": "doc", "content": [{"type": "paragraph", "attrs": {"style": "x"}}]}),
            "$.content[0].attrs: unknown field \"style\"",
        ),
        (
            json!({"type": "doc", "content": [{"type": "paragraph", "onclick": "x"}]}),
            "$.content[0]: unknown field \"onclick\"",
        ),
        (
            json!({"type": "doc", "content": [{"type": "bulletList", "content": [{"type": "listItem", "content": [{"type": "bulletList", "content": []}]}]}]}),
            "$.content[0].content[0].content[0]: bulletList is not allowed here inside listItem",
        ),
        (
            json!({"type": "doc", "content": [{"type": "paragraph", "content": [{"type": "text", "text": ""}]}]}),
            "$.content[0].content[0].text: must be a non-empty string",
        ),
        (
            json!({"type": "doc", "content": [{"type": "paragraph", "content": [{"type": "text", "text": "x", "marks": [{"type": "link", "attrs": {"href": "javascript:alert(1)"}}]}]}]}),
            "$.content[0].content[0].marks[0].attrs.href: must be an absolute http, https or mailto URL",
        ),
        (
            json!({"type": "doc", "content": [{"type": "paragraph", "content": [{"type": "text", "text": "x", "marks": [{"type": "bold"}, {"type": "bold"}]}]}]}),
            "$.content[0].content[0].marks[1]: duplicate mark",
        ),
        (
            json!({"type": "doc", "content": [{"type": "paragraph", "content": [{"type": "text", "text": "x", "marks": [{"type": "code"}, {"type": "bold"}]}]}]}),
            "$.content[0].content[0].marks: code cannot be combined with other marks",
        ),
        (
            json!({"type": "doc", "content": [{"type": "paragraph", "content": [{"type": "text", "text": "x", "marks": [{"type": "highlight"}]}]}]}),
            "$.content[0].content[0].marks[0].type: unknown mark \"highlight\"",
        ),
    ];
    for (v, message) in cases {
        let e = to_idoc_json(v, AG).expect_err(&v.to_string());
        assert_eq!(e.to_string(), format!("invalid IDoc at {message}"), "{v}");
    }
}

#[test]
fn markdown_with_html_loses_nothing() {
    // An autolink beside an HTML tag: Markdown, so the autolink is a link (as HTML it would be
    // an element named `https:`, and its text lost).
    assert_eq!(
        html("See <https://example.com> and <b>x</b>", ED),
        "<p>See <a target=\"_blank\" rel=\"noopener noreferrer nofollow\" href=\"https://example.com\">\
         https://example.com</a> and <strong>x</strong></p>"
    );
    assert_eq!(
        html("Mail <me@example.com> or <b>x</b>", ED),
        "<p>Mail <a target=\"_blank\" rel=\"noopener noreferrer nofollow\" href=\"mailto:me@example.com\">\
         me@example.com</a> or <strong>x</strong></p>"
    );
    // A block element, a blank line, then Markdown: the HTML block and the emphasis both stay.
    assert_eq!(html("<div>x</div>\n\n*y*", ED), "<p>x</p><p><em>y</em></p>");
    assert_eq!(
        html("<p>a <b>b</b></p>\n\n_c_ and **d**", ED),
        "<p>a <strong>b</strong></p><p><em>c</em> and <strong>d</strong></p>"
    );
    // HTML without such text is still read as HTML.
    assert_eq!(html("<div>x</div>\n\n<p>*y*</p>", ED), "<p>x</p><p>*y*</p>");
}

#[test]
fn limits_give_clear_errors() {
    let big = "a".repeat(MAX_INPUT_BYTES + 1);
    let e = to_idoc(&big, ED).unwrap_err();
    assert_eq!(e, RichTextError::TooLarge { len: MAX_INPUT_BYTES + 1, max: MAX_INPUT_BYTES });
    assert!(e.to_string().contains("too long"));
    let deep_md = format!("{}x", "> ".repeat(MAX_DEPTH + 1));
    assert_eq!(to_idoc(&deep_md, ED).unwrap_err(), RichTextError::TooDeep { max: MAX_DEPTH });
    let deep_html = "<b>".repeat(5000);
    assert!(matches!(to_idoc(&deep_html, ED), Err(RichTextError::TooDeep { .. })));
    let mut v = json!({"type": "text", "text": "x"});
    for _ in 0..200 {
        v = json!({"type": "blockquote", "content": [v]});
    }
    let v = json!({"type": "doc", "content": [v]});
    assert!(matches!(to_idoc_json(&v, AG), Err(RichTextError::TooDeep { .. })));
    // within limits is fine
    assert!(to_idoc(&format!("{}x", "> ".repeat(MAX_DEPTH / 2)), ED).is_ok());
}

#[test]
fn doc_serde_roundtrip_in_tiptap_shape() {
    let d = to_idoc("# T\n\n- a **b**\n\n3. c", ED).unwrap();
    let s = serde_json::to_string(&d).unwrap();
    assert_eq!(serde_json::from_str::<Doc>(&s).unwrap(), d);
    assert!(s.starts_with("{\"type\":\"doc\",\"content\":[{\"type\":\"heading\",\"attrs\":{\"level\":1}"), "{s}");
}
