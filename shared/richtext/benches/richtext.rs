//! Throughput of the rich-text engine on realistic 1–10 KB descriptions: parse (detect + parse
//! to IDoc), render (IDoc to HTML), and the API's full write-then-read path; and the worst
//! inputs at the size limit (`richtext/worst`: the deepest, refused by the scans before parsing,
//! and the slowest accepted ones). Results are in docs/richtext.md. Run:
//! `cargo bench -p shared --bench richtext` (`-- worst` for the worst cases only).

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use workapi_richtext::{MAX_DEPTH, MAX_INPUT_BYTES, Profile, to_html, to_idoc};

const HTML_UNIT: &str = "<h2>Delivery</h2><p>The <strong>migration</strong> moves <em>all</em> customer data to the \
new cluster; see <a href=\"https://example.com/runbook?step=3&amp;env=prod\">the runbook</a> and keep \
<code>max_connections</code> low.</p><ul><li>Export tables<ul><li>orders</li><li>invoices, <s>drafts</s></li></ul></li>\
<li>Verify <u>checksums</u></li></ul><ol start=\"3\"><li>Switch DNS</li><li>Monitor for 24&nbsp;h</li></ol>\
<blockquote><p>Rollback is manual.</p></blockquote><pre><code>psql -c 'select 1'\nexit</code></pre><hr>\n";

const MD_UNIT: &str = "## Delivery\n\nThe **migration** moves *all* customer data to the new cluster; see \
[the runbook](https://example.com/runbook?step=3&env=prod) and keep `max_connections` low.\n\n- Export tables\n  \
- orders\n  - invoices, ~~drafts~~\n- Verify <u>checksums</u>\n\n3. Switch DNS\n4. Monitor for 24 h\n\n> Rollback is \
manual.\n\n```sh\npsql -c 'select 1'\nexit\n```\n\n| step | owner |\n|---|---|\n| export | ops |\n\n---\n\n";

fn sized(unit: &str, bytes: usize) -> String {
    let mut s = String::with_capacity(bytes + unit.len());
    while s.len() < bytes {
        s.push_str(unit);
    }
    s
}

fn bench(c: &mut Criterion) {
    for (format, unit, profile) in [
        ("html", HTML_UNIT, Profile::Editor),
        ("markdown", MD_UNIT, Profile::Editor),
        ("markdown-product", MD_UNIT, Profile::Product),
    ] {
        let mut group = c.benchmark_group(format!("richtext/{format}"));
        for kb in [1usize, 4, 10] {
            let input = sized(unit, kb * 1024);
            group.throughput(Throughput::Bytes(input.len() as u64));
            group.bench_with_input(BenchmarkId::new("to_idoc", kb), &input, |b, i| {
                b.iter(|| to_idoc(black_box(i), profile).unwrap())
            });
            let doc = to_idoc(&input, profile).unwrap();
            group.bench_with_input(BenchmarkId::new("to_html", kb), &doc, |b, d| b.iter(|| to_html(black_box(d))));
            group.bench_with_input(BenchmarkId::new("round_trip", kb), &input, |b, i| {
                b.iter(|| to_html(&to_idoc(black_box(i), profile).unwrap()))
            });
        }
        group.finish();
    }
}

/// `unit` repeated to the size limit, between `prefix` and `suffix`.
fn at_limit(prefix: &str, unit: &str, suffix: &str) -> String {
    format!("{prefix}{}{suffix}", unit.repeat((MAX_INPUT_BYTES - prefix.len() - suffix.len()) / unit.len()))
}

/// The inputs that made the parsers work hardest, each at the size limit (256 KiB). The first
/// ones are refused as too deep, the others accepted.
fn worst_inputs() -> Vec<(&'static str, String, bool)> {
    let indented_lists = {
        let mut s = String::new();
        let mut level = 0;
        while s.len() + 2 * level + 4 < MAX_INPUT_BYTES {
            s.push_str(&format!("{}- a\n", "  ".repeat(level)));
            level += 1;
        }
        s
    };
    let reopened: String = (0..20_000).map(|i| format!("<p><b id={i}>x")).collect();
    let deepest_accepted = at_limit(&"> ".repeat(MAX_DEPTH - 3), "long quoted text ", "");
    vec![
        ("md-quotes", at_limit("", ">", ""), false),
        ("md-lists", at_limit("", "- ", "x"), false),
        ("md-ordered", at_limit("", "1. ", "x"), false),
        ("md-indented-lists", indented_lists, false),
        ("html-ul-li", at_limit("", "<ul><li>", ""), false),
        ("html-div", at_limit("", "<div>", ""), false),
        ("html-b-i", at_limit("", "<b><i>", ""), false),
        ("html-reopened-b", reopened[..MAX_INPUT_BYTES].to_string(), false),
        ("md-inline-span", at_limit("# t\n\n", "<span>", ""), false),
        (
            "md-emphasis",
            format!("{}a{}", "*".repeat(MAX_INPUT_BYTES / 2 - 1), "*".repeat(MAX_INPUT_BYTES / 2 - 1)),
            false,
        ),
        ("md-deepest-accepted", deepest_accepted, true),
        ("md-star-a", at_limit("", "*a", ""), true),
        ("md-backtick-a", at_limit("", "a`", ""), true),
        ("md-tilde", at_limit("", "~~a", ""), true),
        ("md-brackets", at_limit("", "[", ""), true),
        ("md-link-opens", at_limit("", "[a](", ""), true),
        ("html-paragraphs", at_limit("", "<p>a", ""), true),
        ("markdown-realistic", sized(MD_UNIT, MAX_INPUT_BYTES - MD_UNIT.len()), true),
    ]
}

fn worst(c: &mut Criterion) {
    let mut group = c.benchmark_group("richtext/worst");
    group.sample_size(10);
    for (name, input, accepted) in worst_inputs() {
        assert!(input.len() <= MAX_INPUT_BYTES, "{name}");
        assert_eq!(to_idoc(&input, Profile::Editor).is_ok(), accepted, "{name}");
        group.throughput(Throughput::Bytes(input.len() as u64));
        group.bench_with_input(BenchmarkId::new("to_idoc", name), &input, |b, i| {
            b.iter(|| to_idoc(black_box(i), Profile::Editor))
        });
    }
    group.finish();
}

criterion_group!(benches, bench, worst);
criterion_main!(benches);
