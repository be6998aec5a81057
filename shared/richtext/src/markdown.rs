//! Markdown (CommonMark + GFM tables, strikethrough and alerts) written out as HTML for the HTML
//! parser. Going through HTML means raw HTML inside Markdown needs no special path, Markdown and
//! HTML map onto nodes the same way, and the output is sanitised by the same code. Text is
//! escaped here; raw HTML is passed through as is (the HTML parser is the sanitiser).

use pulldown_cmark::{BlockQuoteKind, CodeBlockKind, Event, LinkType, Options, Parser, Tag, TagEnd, TextMergeStream};

use super::Profile;
use super::detect::{has_known_tag, starts_with_known_tag};
use super::model::is_shortcode;
use super::render::{escape_attr, escape_text};

pub fn to_html(input: &str, profile: Profile) -> String {
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_GFM;
    let product = profile == Profile::Product;
    let mut out = String::with_capacity(input.len() + input.len() / 2);
    let mut in_table_head = false;
    let mut in_code_block = false;
    // Inside an image, text events are its alt text (an attribute, written at the end).
    let mut image_alt: Option<String> = None;
    // What each open blockquote was opened as, to close it the same way.
    let mut quotes: Vec<&'static str> = Vec::new();
    for event in TextMergeStream::new(Parser::new_ext(input, options)) {
        if let Some(alt) = image_alt.as_mut() {
            match event {
                Event::End(TagEnd::Image) => {
                    out.push_str("<img alt=\"");
                    out.push_str(&escape_attr(alt));
                    out.push_str("\">");
                    image_alt = None;
                }
                Event::Text(t) | Event::Code(t) => alt.push_str(&t),
                Event::SoftBreak | Event::HardBreak => alt.push(' '),
                _ => {}
            }
            continue;
        }
        match event {
            Event::Start(tag) => match tag {
                Tag::Paragraph => out.push_str("<p>"),
                Tag::Heading { level, .. } => {
                    out.push_str("<h");
                    out.push_str(&(level as u8).to_string());
                    out.push('>');
                }
                Tag::BlockQuote(kind) => match kind.filter(|_| product) {
                    Some(kind) => {
                        out.push_str("<div data-type=\"callout\" data-icon=\"");
                        out.push_str(alert_icon(kind));
                        out.push_str("\">");
                        quotes.push("</div>");
                    }
                    None => {
                        out.push_str("<blockquote>");
                        quotes.push("</blockquote>");
                    }
                },
                Tag::CodeBlock(kind) => {
                    in_code_block = true;
                    out.push_str("<pre><code");
                    if let CodeBlockKind::Fenced(lang) = kind
                        && !lang.is_empty()
                    {
                        out.push_str(" class=\"language-");
                        out.push_str(&escape_attr(lang.split_whitespace().next().unwrap_or("")));
                        out.push('"');
                    }
                    out.push('>');
                }
                Tag::List(Some(start)) => {
                    out.push_str("<ol");
                    if start != 1 {
                        out.push_str(" start=\"");
                        out.push_str(&start.to_string());
                        out.push('"');
                    }
                    out.push('>');
                }
                Tag::List(None) => out.push_str("<ul>"),
                Tag::Item => out.push_str("<li>"),
                Tag::Table(_) => out.push_str("<table>"),
                Tag::TableHead => {
                    in_table_head = true;
                    out.push_str("<thead><tr>");
                }
                Tag::TableRow => out.push_str("<tr>"),
                Tag::TableCell => out.push_str(if in_table_head { "<th>" } else { "<td>" }),
                Tag::Emphasis => out.push_str("<em>"),
                Tag::Strong => out.push_str("<strong>"),
                Tag::Strikethrough => out.push_str("<del>"),
                Tag::Link { link_type, dest_url, .. } => {
                    out.push_str("<a href=\"");
                    if link_type == LinkType::Email {
                        // CommonMark reports `<x@example.com>` without the scheme it implies.
                        out.push_str("mailto:");
                    }
                    out.push_str(&escape_attr(&dest_url));
                    out.push_str("\">");
                }
                Tag::Image { .. } => image_alt = Some(String::new()),
                Tag::HtmlBlock => {}
                _ => {}
            },
            Event::End(end) => match end {
                TagEnd::Paragraph => out.push_str("</p>"),
                TagEnd::Heading(level) => {
                    out.push_str("</h");
                    out.push_str(&(level as u8).to_string());
                    out.push('>');
                }
                TagEnd::BlockQuote(_) => out.push_str(quotes.pop().unwrap_or("</blockquote>")),
                TagEnd::CodeBlock => {
                    in_code_block = false;
                    out.push_str("</code></pre>");
                }
                TagEnd::List(true) => out.push_str("</ol>"),
                TagEnd::List(false) => out.push_str("</ul>"),
                TagEnd::Item => out.push_str("</li>"),
                TagEnd::Table => out.push_str("</tbody></table>"),
                TagEnd::TableHead => {
                    in_table_head = false;
                    out.push_str("</tr></thead><tbody>");
                }
                TagEnd::TableRow => out.push_str("</tr>"),
                TagEnd::TableCell => out.push_str(if in_table_head { "</th>" } else { "</td>" }),
                TagEnd::Emphasis => out.push_str("</em>"),
                TagEnd::Strong => out.push_str("</strong>"),
                TagEnd::Strikethrough => out.push_str("</del>"),
                TagEnd::Link => out.push_str("</a>"),
                _ => {}
            },
            // DIFF: the final newline of a code block is not a line of its own.
            Event::Text(t) if in_code_block => out.push_str(&escape_text(t.strip_suffix('\n').unwrap_or(&t))),
            Event::Text(t) if product => push_with_emoji(&mut out, &t),
            Event::Text(t) => out.push_str(&escape_text(&t)),
            Event::Code(t) => {
                out.push_str("<code>");
                out.push_str(&escape_text(&t));
                out.push_str("</code>");
            }
            // Raw HTML passes to the HTML parser only when it is a known tag: `Vec<u8>` is text.
            Event::InlineHtml(h) if starts_with_known_tag(&h) => out.push_str(&h),
            Event::Html(h) if has_known_tag(&h) || h.trim_start().starts_with("<!--") => out.push_str(&h),
            Event::Html(h) | Event::InlineHtml(h) => out.push_str(&escape_text(&h)),
            Event::SoftBreak => out.push('\n'),
            Event::HardBreak => out.push_str("<br>"),
            Event::Rule => out.push_str("<hr>"),
            _ => {}
        }
    }
    out
}

/// GFM alerts (`> [!TIP]`) become callouts in the product profile, with these icons.
fn alert_icon(kind: BlockQuoteKind) -> &'static str {
    match kind {
        BlockQuoteKind::Note => "information_source",
        BlockQuoteKind::Tip => "bulb",
        BlockQuoteKind::Important => "heavy_exclamation_mark",
        BlockQuoteKind::Warning => "warning",
        BlockQuoteKind::Caution => "rotating_light",
    }
}

/// Escapes text, turning `:shortcode:` into emoji nodes (product profile).
fn push_with_emoji(out: &mut String, text: &str) {
    let mut rest = text;
    while let Some(open) = rest.find(':') {
        let after = &rest[open + 1..];
        let word_before = rest[..open].chars().next_back().is_some_and(|c| c.is_alphanumeric());
        match after.find(':') {
            Some(close)
                if !word_before
                    && is_shortcode(&after[..close])
                    && after[..close].bytes().any(|b| b.is_ascii_lowercase()) =>
            {
                out.push_str(&escape_text(&rest[..open]));
                let code = &after[..close];
                out.push_str("<span data-type=\"emoji\" data-icon=\"");
                out.push_str(code);
                out.push_str("\"></span>");
                rest = &after[close + 1..];
            }
            _ => {
                out.push_str(&escape_text(&rest[..=open]));
                rest = after;
            }
        }
    }
    out.push_str(&escape_text(rest));
}
