//! Property: for any valid IDoc, parsing its rendered HTML gives the same document back
//! (`to_idoc(to_html(doc)) == doc`), in every profile. Documents are generated from the schema:
//! every node and mark, nested lists, tables, callouts, emoji, links, odd characters.
//!
//! Text is generated in canonical form, i.e. as HTML whitespace rules leave it (no leading or
//! trailing spaces in a block, no runs, no tabs or newlines). Two more properties cover any
//! whitespace and control characters: IDoc JSON with arbitrary whitespace is stored so that it survives (stored text is
//! collapsed as a browser shows it, except preformatted paragraphs), and HTML full of
//! whitespace (`white-space: pre`, `<pre>` with links, nested lists) parses to an IDoc that is a
//! fixed point of render and parse.

use proptest::prelude::*;
use workapi_richtext::{
    CellAttrs, Doc, HeadingAttrs, IconAttrs, LinkAttrs, Mark, Node, OrderedListAttrs, Profile, to_html, to_idoc,
    to_idoc_json, validate,
};

fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z0-9]{1,8}",
        Just("<script>".to_string()),
        Just("a&b".to_string()),
        Just("\"q'".to_string()),
        Just("ünï©ødé".to_string()),
        Just("a\u{a0}b".to_string()),
        Just("x>y".to_string()),
        Just("*not_md*".to_string()),
    ]
}

fn mark_set() -> impl Strategy<Value = Vec<Mark>> {
    let link = prop_oneof![
        Just(None),
        Just(Some("https://example.com/a?b=1&c=2".to_string())),
        Just(Some("mailto:a@example.com".to_string())),
        "[a-z]{1,6}".prop_map(|h| Some(format!("http://{h}.example/p"))),
    ];
    (link, any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()).prop_map(
        |(link, code, bold, italic, strike, underline)| {
            let mut set = Vec::new();
            if let Some(href) = link {
                set.push(Mark::Link { attrs: LinkAttrs { href } });
            }
            if code {
                set.push(Mark::Code); // code excludes everything but... nothing: code alone
                return vec![Mark::Code];
            }
            for (on, m) in
                [(bold, Mark::Bold), (italic, Mark::Italic), (strike, Mark::Strike), (underline, Mark::Underline)]
            {
                if on {
                    set.push(m);
                }
            }
            set
        },
    )
}

#[derive(Debug, Clone)]
enum Piece {
    Text(String, Vec<Mark>),
    Break(Vec<Mark>),
    Emoji(String, Vec<Mark>),
}

fn inline(product: bool) -> impl Strategy<Value = Vec<Node>> {
    let piece = prop_oneof![
        4 => (prop::collection::vec(word(), 1..4), mark_set()).prop_map(|(w, m)| Piece::Text(w.join(" "), m)),
        1 => mark_set().prop_map(Piece::Break),
        1 => ("[a-z_]{1,10}", mark_set()).prop_map(|(i, m)| Piece::Emoji(i, m)),
    ];
    prop::collection::vec(piece, 0..6).prop_map(move |pieces| canonical(pieces, product))
}

/// Joins pieces the way collapsed HTML text looks: one space between adjacent texts.
fn canonical(pieces: Vec<Piece>, product: bool) -> Vec<Node> {
    let mut out: Vec<Node> = Vec::new();
    for p in pieces {
        match p {
            Piece::Text(t, marks) => {
                if let Some(Node::Text { text, .. }) = out.last_mut() {
                    text.push(' ');
                }
                match out.last_mut() {
                    Some(Node::Text { text, marks: m }) if *m == marks => text.push_str(&t),
                    _ => out.push(Node::Text { text: t, marks }),
                }
            }
            Piece::Break(marks) => out.push(Node::HardBreak { marks }),
            Piece::Emoji(icon, marks) if product => out.push(Node::Emoji { attrs: IconAttrs { icon }, marks }),
            Piece::Emoji(..) => {}
        }
    }
    // A space before a hard break or at the end would be collapsed away: drop trailing spaces.
    for i in 0..out.len() {
        let next_is_text = matches!(out.get(i + 1), Some(Node::Text { .. }) | Some(Node::Emoji { .. }));
        if let Node::Text { text, .. } = &mut out[i]
            && !next_is_text
        {
            while text.ends_with(' ') {
                text.pop();
            }
        }
    }
    out.retain(|n| !matches!(n, Node::Text { text, .. } if text.is_empty()));
    // Removing empties may have made two texts with equal marks adjacent: merge them.
    let mut merged: Vec<Node> = Vec::new();
    for n in out {
        match (merged.last_mut(), n) {
            (Some(Node::Text { text, marks }), Node::Text { text: t, marks: m }) if *marks == m => text.push_str(&t),
            (_, n) => merged.push(n),
        }
    }
    merged
}

fn block(product: bool) -> impl Strategy<Value = Node> {
    let leaf = prop_oneof![
        4 => inline(product).prop_map(|content| Node::Paragraph { content }),
        1 => (1u8..=6, inline(product)).prop_map(|(level, content)| Node::Heading { attrs: HeadingAttrs { level }, content }),
        1 => Just(Node::HorizontalRule),
    ];
    leaf.prop_recursive(4, 24, 4, move |inner| {
        let items = prop::collection::vec(
            (inline(product), prop::collection::vec(inner.clone(), 0..3)).prop_map(|(p, rest)| {
                let mut content = vec![Node::Paragraph { content: p }];
                content.extend(rest);
                Node::ListItem { content }
            }),
            1..4,
        )
        .boxed();
        let cell = (
            any::<bool>(),
            1u32..3,
            1u32..3,
            prop::option::of(prop::collection::vec(1u32..500, 1..3)),
            prop::collection::vec(inner.clone(), 1..3),
        )
            .prop_map(|(header, colspan, rowspan, colwidth, content)| {
                let attrs = CellAttrs { colspan, rowspan, colwidth };
                if header { Node::TableHeader { attrs, content } } else { Node::TableCell { attrs, content } }
            });
        let mut options = vec![
            prop::collection::vec(inner.clone(), 1..4).prop_map(|content| Node::Blockquote { content }).boxed(),
            items.clone().prop_map(|content| Node::BulletList { content }).boxed(),
            (prop_oneof![Just(1i32), -5i32..1000], items)
                .prop_map(|(start, content)| Node::OrderedList {
                    attrs: (start != 1).then_some(OrderedListAttrs { start }),
                    content,
                })
                .boxed(),
        ];
        if product {
            options.push(
                prop::collection::vec(
                    prop::collection::vec(cell, 1..4).prop_map(|content| Node::TableRow { content }),
                    1..3,
                )
                .prop_map(|content| Node::Table { content })
                .boxed(),
            );
            options.push(
                ("[a-z_+-]{1,12}", prop::collection::vec(inner, 1..3))
                    .prop_map(|(icon, content)| Node::Callout { attrs: IconAttrs { icon }, content })
                    .boxed(),
            );
        }
        prop::strategy::Union::new(options)
    })
}

fn doc(product: bool) -> impl Strategy<Value = Doc> {
    prop::collection::vec(block(product), 1..5).prop_map(|content| Doc { content })
}

/// Text with whitespace anywhere: runs, tabs, newlines, only whitespace, NBSP.
fn messy_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-c ]{1,6}",
        "[ \t\n]{1,3}",
        "[a-c]{1,2}[ \t\n\r]{2,3}[a-c]{1,2}",
        Just("\u{a0}".to_string()),
        Just(" x ".to_string()),
        Just("a\u{1}\u{2028}b\u{c}".to_string()),
    ]
}

fn messy_inline() -> impl Strategy<Value = Vec<Node>> {
    let node = prop_oneof![
        4 => (messy_text(), mark_set()).prop_map(|(text, marks)| Node::Text { text, marks }),
        1 => mark_set().prop_map(|marks| Node::HardBreak { marks }),
    ];
    prop::collection::vec(node, 0..6)
}

/// Editor-profile documents whose text has whitespace anywhere, as IDoc JSON may hold it.
fn messy_doc() -> impl Strategy<Value = Doc> {
    let block = prop_oneof![
        3 => messy_inline().prop_map(|content| Node::Paragraph { content }),
        1 => messy_inline().prop_map(|content| Node::Heading { attrs: HeadingAttrs { level: 2 }, content }),
        1 => (messy_inline(), messy_inline()).prop_map(|(a, b)| Node::BulletList {
            content: vec![Node::ListItem { content: vec![Node::Paragraph { content: a }, Node::Paragraph { content: b }] }],
        }),
        1 => messy_inline().prop_map(|c| Node::Blockquote { content: vec![Node::Paragraph { content: c }] }),
    ];
    prop::collection::vec(block, 1..4).prop_map(|content| Doc { content })
}

/// HTML with whitespace that only some contexts keep: `white-space: pre`, `<pre>` with links
/// and marks inside, headings, lists directly inside lists, text at the top level.
fn html_fragment() -> impl Strategy<Value = String> {
    let text = prop_oneof![
        "[a-c ]{1,6}",
        "[ \t\n]{1,3}",
        "[a-c]{1,2}[ \t\n]{2,3}[a-c]{1,2}",
        Just("&nbsp;".to_string()),
        Just("a\u{1}\u{2028}b\u{85}".to_string())
    ];
    let inline = text.prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            (prop_oneof![Just("b"), Just("i"), Just("code"), Just("span")], inner.clone())
                .prop_map(|(tag, c)| format!("<{tag}>{c}</{tag}>")),
            inner.clone().prop_map(|c| format!("<a href=\"https://e.com/\">{c}</a>")),
            Just("<br>".to_string()),
            prop::collection::vec(inner, 1..3).prop_map(|v| v.concat()),
        ]
    });
    let block = prop_oneof![
        inline.clone().prop_map(|c| format!("<p>{c}</p>")),
        inline.clone().prop_map(|c| format!("<p style=\"white-space:pre\">{c}</p>")),
        inline.clone().prop_map(|c| format!("<pre>{c}</pre>")),
        inline.clone().prop_map(|c| format!("<h2>{c}</h2>")),
        (inline.clone(), inline.clone()).prop_map(|(a, b)| format!("<ul><li>{a}</li><ul><li>{b}</li></ul></ul>")),
        inline,
    ];
    prop::collection::vec(block, 1..4).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn editor_docs_survive_render_and_parse(d in doc(false)) {
        for profile in [Profile::Editor, Profile::Agent, Profile::Product] {
            prop_assume!(validate(&d, profile).is_ok());
            let html = to_html(&d);
            let back = to_idoc(&html, profile).unwrap();
            prop_assert_eq!(&back, &d, "html: {}", html);
        }
    }

    #[test]
    fn product_docs_survive_render_and_parse(d in doc(true)) {
        prop_assume!(validate(&d, Profile::Product).is_ok());
        let html = to_html(&d);
        let back = to_idoc(&html, Profile::Product).unwrap();
        prop_assert_eq!(&back, &d, "html: {}", html);
    }

    #[test]
    fn any_whitespace_in_idoc_json_is_stored_so_that_it_survives(d in messy_doc()) {
        let stored = to_idoc_json(&serde_json::to_value(&d).unwrap(), Profile::Agent).unwrap();
        let html = to_html(&stored);
        for profile in [Profile::Agent, Profile::Editor] {
            prop_assert_eq!(&to_idoc(&html, profile).unwrap(), &stored, "html: {}", html);
        }
    }

    #[test]
    fn parsed_html_is_a_fixed_point(input in html_fragment()) {
        for profile in [Profile::Editor, Profile::Product] {
            let doc = to_idoc(&input, profile).unwrap();
            let html = to_html(&doc);
            prop_assert_eq!(&to_idoc(&html, profile).unwrap(), &doc, "input: {:?}\nhtml: {}", input, html);
        }
    }
}

/// The fuzz target's checks (shared/richtext/fuzz) on inputs that broke them: rendered HTML parses back
/// to the same IDoc, and renders the same again.
#[test]
fn fixed_point_on_known_inputs() {
    for input in [
        "<p style=\"white-space:pre\">a  b</p>",
        "<p style=\"white-space:pre-wrap\"><span style=\"font-weight:700\">a  b</span>\tc</p>",
        "<p>a</p> x",
        "<p><b>a<br></b> c</p>",
        "<h1><pre>a  b</pre></h1>",
        "<pre><a href=\"https://example.com\">x</a></pre>",
        "<pre>a\n  <b>b</b> <a href=\"https://example.com\">x  y</a></pre>",
        "<pre>   <a href=\"https://e.com\">x</a>\n  y</pre>",
        "<pre><code>x\n  y</code></pre>",
    ] {
        for profile in [Profile::Editor, Profile::Product, Profile::Agent] {
            let doc = to_idoc(input, profile).unwrap();
            let html = to_html(&doc);
            let again = to_idoc(&html, profile).unwrap();
            assert_eq!(again, doc, "{input:?} rendered as {html:?}");
            assert_eq!(to_html(&again), html, "{input:?}");
        }
    }
}
