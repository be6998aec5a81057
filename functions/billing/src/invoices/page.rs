//! An issued invoice as a page for a person (`GET /billing/invoices/{id}` asked for HTML;
//! docs/billing.md, "The invoice as a page"): its number and dates, the recipient, every line
//! with its quantity, unit price and discount, and the totals in the invoice's currency.
//!
//! Every value from the data is escaped as the rich text escapes (`workapi_richtext::
//! escape_attr`) and isolated in a `<bdi>`, so a name with a right-to-left override cannot
//! turn the text around it. The page is self-contained: its one style sheet is inline and
//! allowed by its hash, nothing else is (no script, no image, no request to anyone).

use super::model::Invoice;
use crate::potential_invoices::model::{PositionLine, ProductLine, SubscriptionLine, TimeLine};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use rust_decimal::Decimal;
use sha2::{Digest, Sha256};
use std::fmt::Write;
use std::sync::LazyLock;
use time::Date;
use workapi_domain::billing::{DocumentKind, day};
use workapi_domain::invoice_lines::ProductCharge;
use workapi_domain::position::DiscountType;
use workapi_domain::pricing::{minor_units, round_amount};
use workapi_richtext::escape_attr as escape;

/// Who the invoice is addressed to, as the contact reads when the page is rendered.
#[derive(Debug, Clone, PartialEq)]
pub struct Recipient {
    pub name: String,
    pub email: String,
    /// The contact's customer organization
    pub organization: Option<String>,
}

/// What the page shows beside the invoice itself.
#[derive(Debug, Clone, Copy)]
pub struct InvoicePage<'a> {
    pub invoice: &'a Invoice,
    /// The workspace that issued it
    pub issuer: &'a str,
    pub project: &'a str,
    /// None when the invoice names no recipient, or its contact no longer exists
    pub recipient: Option<&'a Recipient>,
    /// A credit note: the number of the invoice it cancels
    pub cancels: Option<&'a str>,
    /// A cancelled invoice: the number of its credit note
    pub cancelled_by: Option<&'a str>,
}

/// The page's style sheet: the one inline resource, allowed by its hash.
const STYLE: &str = "body{font:15px/1.45 system-ui,sans-serif;color:#1b1b1b;margin:2rem auto;max-width:60rem;padding:0 1rem}\
h1{font-size:1.6rem;margin:0 0 .25rem}header{display:flex;justify-content:space-between;gap:2rem;flex-wrap:wrap}\
dl{display:grid;grid-template-columns:max-content auto;gap:.15rem 1rem;margin:0}dt{color:#555}dd{margin:0}\
address{font-style:normal}table{border-collapse:collapse;width:100%;margin:1.5rem 0}\
th,td{padding:.35rem .5rem;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}\
th{background:#f3f3f3}.num{text-align:right;white-space:nowrap}.extra td{color:#555;border-bottom-style:dotted}\
.totals{margin-left:auto;width:auto;min-width:20rem}.totals th{background:none;font-weight:normal}\
.totals tr.total th,.totals tr.total td{font-weight:bold;border-top:2px solid #1b1b1b}\
.note{background:#fff6d6;border:1px solid #e6d28a;padding:.5rem .75rem}\
@media print{body{margin:0;max-width:none;font-size:11pt}th{background:none}}";

/// The page's Content-Security-Policy: nothing but its own inline style sheet, by hash. A hash
/// rather than `'unsafe-inline'`: a style that escaped the escaping would still not apply.
pub static CSP: LazyLock<String> = LazyLock::new(|| {
    let hash = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(STYLE.as_bytes()));
    format!(
        "default-src 'none'; style-src 'sha256-{hash}'; img-src data:; base-uri 'none'; form-action 'none'; \
         frame-ancestors 'none'"
    )
});

/// The page as a response: HTML, its policy, kept by the reader's browser only.
pub fn response(html: String) -> Response {
    let mut response = html.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    if let Ok(csp) = HeaderValue::from_str(&CSP) {
        headers.insert(header::CONTENT_SECURITY_POLICY, csp);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("private, no-cache"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::VARY, HeaderValue::from_static("Accept"));
    response
}

/// A value of the data, escaped and isolated from the text around it.
fn text(value: &str) -> String {
    format!("<bdi>{}</bdi>", escape(value))
}

fn date(value: Date) -> String {
    day::text(value)
}

/// An amount in the currency: rounded to its minor unit, thousands grouped, the code after it
/// (`1,249.50 EUR`, `-357.00 EUR`, `1,500 JPY`).
pub fn money(amount: Decimal, currency: &str) -> String {
    let places = minor_units(currency);
    let rounded = round_amount(amount, places);
    let fixed = format!("{:.*}", places as usize, rounded.abs());
    let (whole, fraction) = fixed.split_once('.').map_or((fixed.as_str(), None), |(w, f)| (w, Some(f)));
    let mut grouped = String::new();
    for (i, digit) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    let sign = if rounded.is_sign_negative() && !rounded.is_zero() { "-" } else { "" };
    let fraction = fraction.map(|f| format!(".{f}")).unwrap_or_default();
    format!("{sign}{grouped}{fraction}\u{a0}{}", escape(currency))
}

/// A quantity as written: no trailing zeros (`1.5`, `10`).
fn quantity(value: Decimal) -> String {
    value.normalize().to_string()
}

/// One row of the lines' table.
struct Row {
    description: String,
    quantity: String,
    unit_price: String,
    discount: String,
    amount: String,
    extra: bool,
}

impl Row {
    fn write(&self, html: &mut String) {
        let class = if self.extra { " class=\"extra\"" } else { "" };
        let _ = writeln!(
            html,
            "<tr{class}><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td></tr>",
            self.description, self.quantity, self.unit_price, self.discount, self.amount
        );
    }
}

fn subscription_row(line: &SubscriptionLine, currency: &str) -> Row {
    Row {
        description: format!(
            "{} <small>(subscription, {} – {})</small>",
            text(&line.title),
            date(line.period_start),
            date(line.period_end)
        ),
        quantity: quantity(line.quantity),
        unit_price: money(line.unit_price, currency),
        discount: String::new(),
        amount: money(line.amount, currency),
        extra: false,
    }
}

fn time_row(line: &TimeLine, currency: &str) -> Row {
    let quotation = if line.express_quotation_id.is_some() { ", fixed price by express quotation" } else { "" };
    Row {
        description: format!("#{} {} <small>(time{quotation})</small>", line.short_number, text(&line.title)),
        quantity: format!("{}\u{a0}h", quantity(line.hours)),
        unit_price: money(line.hour_rate, currency),
        discount: String::new(),
        amount: money(line.amount, currency),
        extra: false,
    }
}

fn position_row(line: &PositionLine, currency: &str) -> Row {
    let discount = if line.discount.is_zero() {
        String::new()
    } else {
        let off = money(-line.discount, currency);
        match line.discount_type {
            DiscountType::Percentage => format!("{}\u{a0}% ({off})", quantity(line.discount_amount)),
            DiscountType::Fixed => off,
        }
    };
    Row {
        description: format!("{} <small>(position)</small>", text(&line.name)),
        quantity: "1".into(),
        unit_price: money(line.price, currency),
        discount,
        amount: money(line.amount, currency),
        extra: false,
    }
}

fn product_rows(line: &ProductLine, currency: &str) -> Vec<Row> {
    let variant = line.variant_name.as_deref().map(|v| format!(" – {}", text(v))).unwrap_or_default();
    let kind = match line.charge {
        ProductCharge::OneTime => "one-time".to_owned(),
        ProductCharge::Subscription => "subscription".to_owned(),
        ProductCharge::PerUnit => "per unit".to_owned(),
    };
    let period = match (line.period_start, line.period_end) {
        (Some(start), Some(end)) => format!(", {} – {}", date(start), date(end)),
        _ => String::new(),
    };
    // A shorter last period is charged for its months of the frequency.
    let months = match (line.months, line.price_frequency) {
        (Some(months), Some(frequency)) if months != frequency => format!(", {months} of {frequency} months"),
        _ => String::new(),
    };
    let unit = line.unit_name.as_deref().map(|u| format!("\u{a0}{}", text(u))).unwrap_or_default();
    let mut rows = vec![Row {
        description: format!("{}{variant} <small>(product, {kind}{period}{months})</small>", text(&line.name)),
        quantity: format!("{}{unit}", quantity(line.quantity)),
        unit_price: money(line.unit_price, currency),
        discount: String::new(),
        amount: money(line.base_amount, currency),
        extra: false,
    }];
    rows.extend(line.extras.iter().map(|extra| Row {
        description: format!("+ {}", text(&extra.name)),
        quantity: format!("{}{unit}", quantity(line.quantity)),
        unit_price: money(extra.unit_price, currency),
        discount: String::new(),
        amount: money(extra.amount, currency),
        extra: true,
    }));
    rows
}

/// The invoice's page (see the module comment).
pub fn render(page: &InvoicePage) -> String {
    let invoice = page.invoice;
    let kind = match invoice.kind {
        DocumentKind::Invoice => "Invoice",
        DocumentKind::CreditNote => "Credit note",
    };
    let title = format!("{kind} {}", text(&invoice.number));
    let mut html = String::with_capacity(4096);
    let _ = write!(
        html,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"referrer\" content=\"no-referrer\">\n<link rel=\"icon\" href=\"data:,\">\n\
         <title>{kind} {number}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<header>\n<div>\n\
         <h1>{title}</h1>\n<p>{issuer}</p>\n</div>\n<dl>\n",
        number = escape(&invoice.number),
        issuer = text(page.issuer),
    );
    let mut fact = |term: &str, value: String| {
        let _ = writeln!(html, "<dt>{term}</dt><dd>{value}</dd>");
    };
    fact("Number", text(&invoice.number));
    if let Some(issued) = invoice.issued_on {
        fact("Issued on", date(issued));
    }
    let (from, to) = (invoice.billed_from.unwrap_or(invoice.date_from), invoice.billed_to.unwrap_or(invoice.date_to));
    fact("Service period", format!("{} – {}", date(from), date(to)));
    fact("Project", text(page.project));
    html.push_str("</dl>\n</header>\n");
    html.push_str("<section id=\"recipient\">\n<h2>Recipient</h2>\n");
    match page.recipient {
        Some(recipient) => {
            let _ = writeln!(
                html,
                "<address>{}{}<br>{}</address>",
                recipient.organization.as_deref().map(|o| format!("{}<br>", text(o))).unwrap_or_default(),
                text(&recipient.name),
                text(&recipient.email)
            );
        }
        None => html.push_str("<p>No recipient named.</p>\n"),
    }
    html.push_str("</section>\n");
    if let Some(number) = page.cancels {
        let _ =
            writeln!(html, "<p class=\"note\" id=\"cancels\">This credit note cancels invoice {}.</p>", text(number));
    }
    if let Some(number) = page.cancelled_by {
        let _ = writeln!(html, "<p class=\"note\" id=\"cancelled\">Cancelled by credit note {}.</p>", text(number));
    }
    match (&invoice.currency, invoice.net_total, invoice.tax_rate, invoice.tax, invoice.total) {
        (Some(currency), Some(net), Some(rate), Some(tax), Some(total)) => {
            write_lines(&mut html, invoice, currency);
            let _ = writeln!(
                html,
                "<table class=\"totals\" id=\"totals\">\n<tr><th>Net</th><td class=\"num\">{}</td></tr>\n\
                 <tr><th>Tax {}\u{a0}%</th><td class=\"num\">{}</td></tr>\n\
                 <tr class=\"total\"><th>Total</th><td class=\"num\">{}</td></tr>\n</table>",
                money(net, currency),
                quantity(rate),
                money(tax, currency),
                money(total, currency)
            );
        }
        _ => html.push_str(
            "<p class=\"note\">Issued outside this API: its lines and totals are not held here, only its number and \
             the period it bills.</p>\n",
        ),
    }
    html.push_str("</body>\n</html>\n");
    html
}

/// The lines' table; a credit note, which holds no lines, says what it reverses instead.
fn write_lines(html: &mut String, invoice: &Invoice, currency: &str) {
    let mut rows = Vec::new();
    rows.extend(invoice.subscriptions.iter().map(|l| subscription_row(l, currency)));
    rows.extend(invoice.tasks.iter().map(|l| time_row(l, currency)));
    rows.extend(invoice.positions.iter().map(|l| position_row(l, currency)));
    rows.extend(invoice.products.iter().flat_map(|l| product_rows(l, currency)));
    if rows.is_empty() {
        if invoice.kind == DocumentKind::CreditNote {
            html.push_str("<p>It reverses the cancelled invoice's totals.</p>\n");
        }
        return;
    }
    html.push_str(
        "<table id=\"lines\">\n<thead><tr><th>Description</th><th class=\"num\">Quantity</th>\
         <th class=\"num\">Unit price</th><th class=\"num\">Discount</th><th class=\"num\">Amount</th></tr></thead>\n\
         <tbody>\n",
    );
    for row in &rows {
        row.write(html);
    }
    html.push_str("</tbody>\n</table>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuid::Uuid;
    use workapi_domain::invoice_lines::ExtraCharge;

    fn d(text: &str) -> Decimal {
        text.parse().unwrap()
    }

    fn day(text: &str) -> Date {
        day::parse(text).unwrap()
    }

    fn invoice() -> Invoice {
        Invoice {
            id: Uuid::nil(),
            kind: DocumentKind::Invoice,
            number: "17".into(),
            project_id: Uuid::nil(),
            potential_invoice_id: Some("time::x".into()),
            date_from: day("2026-03-01"),
            date_to: day("2026-03-31"),
            billed_from: Some(day("2026-03-01")),
            billed_to: Some(day("2026-03-31")),
            contact_id: Some(Uuid::nil()),
            currency: Some("EUR".into()),
            subscriptions: vec![],
            tasks: vec![TimeLine {
                task_id: Uuid::nil(),
                short_number: 4,
                title: "Support".into(),
                hours: d("6.5"),
                hour_rate: d("100"),
                amount: d("650"),
                express_quotation_id: None,
            }],
            positions: vec![PositionLine {
                line_id: "position:x".into(),
                position_id: Uuid::nil(),
                name: "Licence".into(),
                sort: 1,
                price: d("199.99"),
                discount_type: DiscountType::Percentage,
                discount_amount: d("12.5"),
                discount: d("25"),
                amount: d("174.99"),
            }],
            products: vec![],
            net_total: Some(d("824.99")),
            tax_rate: Some(d("19")),
            tax: Some(d("156.75")),
            total: Some(d("981.74")),
            line_ids: vec![],
            time_entry_ids: vec![],
            task_ids: vec![],
            consumed: vec![],
            cancels: None,
            cancelled_by: None,
            issued_on: Some(day("2026-04-02")),
            issued_at: Some("2026-04-02T12:00:00.000Z".into()),
        }
    }

    fn recipient(name: &str) -> Recipient {
        Recipient { name: name.into(), email: "erika@acme.example".into(), organization: Some("Acme GmbH".into()) }
    }

    fn page<'a>(invoice: &'a Invoice, recipient: Option<&'a Recipient>) -> InvoicePage<'a> {
        InvoicePage {
            invoice,
            issuer: "Demo workspace",
            project: "Web shop",
            recipient,
            cancels: None,
            cancelled_by: None,
        }
    }

    #[test]
    fn amounts_are_in_the_currency_s_minor_unit_grouped_with_the_code() {
        assert_eq!(money(d("1249.5"), "EUR"), "1,249.50\u{a0}EUR");
        assert_eq!(money(d("-357"), "EUR"), "-357.00\u{a0}EUR");
        assert_eq!(money(d("0"), "EUR"), "0.00\u{a0}EUR");
        assert_eq!(money(d("1234567.891"), "USD"), "1,234,567.89\u{a0}USD");
        assert_eq!(money(d("1500"), "JPY"), "1,500\u{a0}JPY");
        assert_eq!(money(d("12.3456"), "KWD"), "12.346\u{a0}KWD");
        assert_eq!(money(d("-0.001"), "EUR"), "0.00\u{a0}EUR");
        assert_eq!(money(d("999"), "EUR"), "999.00\u{a0}EUR");
    }

    #[test]
    fn the_page_shows_the_number_recipient_lines_discount_and_totals() {
        let invoice = invoice();
        let erika = recipient("Erika Mustermann");
        let html = render(&page(&invoice, Some(&erika)));
        assert!(html.contains("<h1>Invoice <bdi>17</bdi></h1>"), "{html}");
        assert!(html.contains("<dt>Issued on</dt><dd>2026-04-02</dd>"), "{html}");
        assert!(html.contains("<dt>Service period</dt><dd>2026-03-01 – 2026-03-31</dd>"), "{html}");
        assert!(html.contains("<address><bdi>Acme GmbH</bdi><br><bdi>Erika Mustermann</bdi><br>"), "{html}");
        assert!(html.contains("#4 <bdi>Support</bdi>"), "{html}");
        assert!(html.contains("6.5\u{a0}h</td><td class=\"num\">100.00\u{a0}EUR"), "{html}");
        // The percentage discount: its rate and what it took off.
        assert!(html.contains("<td class=\"num\">12.5\u{a0}% (-25.00\u{a0}EUR)</td><td class=\"num\">174.99\u{a0}EUR"));
        assert!(html.contains("<tr><th>Net</th><td class=\"num\">824.99\u{a0}EUR</td></tr>"), "{html}");
        assert!(html.contains("<tr><th>Tax 19\u{a0}%</th><td class=\"num\">156.75\u{a0}EUR</td></tr>"), "{html}");
        assert!(html.contains("<th>Total</th><td class=\"num\">981.74\u{a0}EUR</td>"), "{html}");
        assert!(!html.contains("<script") && !html.contains("http"), "self-contained: {html}");
    }

    #[test]
    fn hostile_names_are_escaped_and_isolated() {
        let mut invoice = invoice();
        invoice.number = "<b>1</b>".into();
        invoice.positions[0].name = "<script>alert(1)</script>".into();
        invoice.tasks[0].title = "\"><img src=x onerror=alert(1)>".into();
        // A right-to-left override: isolated in its <bdi>, it cannot reverse what follows.
        let hostile = recipient("\u{202e}Erika' \"Mustermann\"");
        let html = render(&InvoicePage { issuer: "A & B <Ltd>", ..page(&invoice, Some(&hostile)) });
        assert!(!html.contains("<script>alert") && !html.contains("<img") && !html.contains("<b>1"), "{html}");
        assert!(html.contains("<bdi>&lt;script&gt;alert(1)&lt;/script&gt;</bdi>"), "{html}");
        assert!(html.contains("<bdi>&quot;&gt;&lt;img src=x onerror=alert(1)&gt;</bdi>"), "{html}");
        assert!(html.contains("<title>Invoice &lt;b&gt;1&lt;/b&gt;</title>"), "{html}");
        assert!(html.contains("<bdi>\u{202e}Erika&#39; &quot;Mustermann&quot;</bdi><br>"), "{html}");
        assert!(html.contains("<p><bdi>A &amp; B &lt;Ltd&gt;</bdi></p>"), "{html}");
        // Every override the data brings is inside one isolate.
        for (at, _) in html.match_indices('\u{202e}') {
            let open = html[..at].rfind("<bdi>").unwrap();
            assert!(!html[open..at].contains("</bdi>"), "{html}");
        }
    }

    #[test]
    fn products_show_their_kind_period_unit_and_extras() {
        let mut invoice = invoice();
        invoice.products = vec![ProductLine {
            line_id: "product:x:perUnit:2026-03-01".into(),
            project_product_id: Uuid::nil(),
            product_id: Uuid::nil(),
            name: "Support hours".into(),
            variant_id: Some(Uuid::nil()),
            variant_name: Some("Standard".into()),
            charge: ProductCharge::PerUnit,
            period_start: Some(day("2026-03-01")),
            period_end: Some(day("2026-03-31")),
            months: Some(1),
            price_frequency: Some(1),
            quantity: d("10"),
            unit_name: Some("hour".into()),
            unit_price: d("90"),
            base_amount: d("900"),
            extras: vec![ExtraCharge {
                option_id: Uuid::nil(),
                value_id: Uuid::nil(),
                name: "Coverage: 24/7".into(),
                unit_price: d("12.5"),
                amount: d("125"),
            }],
            amount: d("1025"),
            due_on: day("2026-03-01"),
        }];
        let html = render(&page(&invoice, None));
        assert!(
            html.contains(
                "<bdi>Support hours</bdi> – <bdi>Standard</bdi> <small>(product, per unit, 2026-03-01 – 2026-03-31)"
            ),
            "{html}"
        );
        assert!(html.contains("10\u{a0}<bdi>hour</bdi></td><td class=\"num\">90.00\u{a0}EUR"), "{html}");
        assert!(html.contains("<tr class=\"extra\"><td>+ <bdi>Coverage: 24/7</bdi></td>"), "{html}");
        assert!(html.contains("12.50\u{a0}EUR</td><td class=\"num\"></td><td class=\"num\">125.00\u{a0}EUR"), "{html}");
        assert!(html.contains("No recipient named."), "{html}");
    }

    #[test]
    fn a_credit_note_names_what_it_cancels_and_a_seeded_invoice_says_it_holds_no_lines() {
        let mut note = invoice();
        note.kind = DocumentKind::CreditNote;
        note.number = "18".into();
        (note.tasks, note.positions) = (vec![], vec![]);
        note.net_total = Some(d("-824.99"));
        note.total = Some(d("-981.74"));
        let html = render(&InvoicePage { cancels: Some("17"), ..page(&note, None) });
        assert!(html.contains("<h1>Credit note <bdi>18</bdi></h1>"), "{html}");
        assert!(html.contains("This credit note cancels invoice <bdi>17</bdi>."), "{html}");
        assert!(html.contains("<th>Total</th><td class=\"num\">-981.74\u{a0}EUR</td>"), "{html}");

        let invoice = invoice();
        let html = render(&InvoicePage { cancelled_by: Some("18"), ..page(&invoice, None) });
        assert!(html.contains("Cancelled by credit note <bdi>18</bdi>."), "{html}");

        let mut seeded = invoice.clone();
        seeded.number = "RE-2026-001".into();
        (seeded.currency, seeded.net_total, seeded.tax_rate, seeded.tax, seeded.total) = (None, None, None, None, None);
        (seeded.billed_from, seeded.billed_to, seeded.issued_on) = (None, None, None);
        let html = render(&page(&seeded, None));
        assert!(html.contains("Issued outside this API"), "{html}");
        assert!(html.contains("<dd>2026-03-01 – 2026-03-31</dd>") && !html.contains("Issued on"), "{html}");
        assert!(!html.contains("id=\"totals\""), "{html}");
    }

    #[test]
    fn the_policy_allows_the_page_s_own_style_sheet_and_nothing_else() {
        let expected = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(STYLE.as_bytes()));
        assert!(CSP.starts_with("default-src 'none'; "), "{}", *CSP);
        assert!(CSP.contains(&format!("style-src 'sha256-{expected}';")), "{}", *CSP);
        assert!(!CSP.contains("unsafe") && !CSP.contains("script-src") && !CSP.contains("http"), "{}", *CSP);
        // The hashed text is exactly the one <style> element's content.
        let html = render(&page(&invoice(), None));
        assert_eq!(html.matches("<style>").count(), 1);
        assert!(html.contains(&format!("<style>{STYLE}</style>")));
        let response = response(html);
        assert_eq!(response.headers()[header::CACHE_CONTROL], "private, no-cache");
        assert_eq!(response.headers()[header::CONTENT_TYPE], "text/html; charset=utf-8");
        assert_eq!(response.headers()[header::CONTENT_SECURITY_POLICY], CSP.as_str());
    }
}
