//! Throughput of the rich-text engine on realistic 1–10 KB descriptions: parse (detect + parse
//! to IDoc), render (IDoc to HTML), and the API's full write-then-read path. Results are in
//! docs/richtext.md. Run: `cargo bench -p shared --bench richtext`.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use shared::richtext::{Profile, to_html, to_idoc};

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

criterion_group!(benches, bench);
criterion_main!(benches);
