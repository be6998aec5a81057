//! The computation (a pure function of what was read): which subscription rows, imported
//! products' charges and manual positions are due and not yet billed, and which time is
//! unbilled, grouped into potential invoices by type and calendar month. The positions' and
//! products' lines are `workapi_domain::invoice_lines`'.

use super::id::{InvoiceId, InvoiceType};
use super::model::{PositionLine, PotentialInvoice, ProductLine, SubscriptionLine, TimeLine};
use super::record::PotentialInvoiceRecord;
use crate::periods;
use crate::subscriptions::{BillingTiming, SubscriptionBilling};
use crate::world::UnbilledEntry;
use rust_decimal::Decimal;
use std::collections::{BTreeMap, HashMap, HashSet};
use time::Date;
use uuid::Uuid;
use workapi_domain::billing::IssuedInvoiceRecord;
use workapi_domain::catalog::ProjectProductRecord;
use workapi_domain::invoice_lines;
use workapi_domain::position::ManualPositionRecord;
use workapi_domain::pricing;
use workapi_domain::project::Project;
use workapi_domain::quotation::ExpressQuotationRecord;
use workapi_domain::task::TaskRecord;

/// Everything a project's potential invoices are computed from.
pub struct Inputs<'a> {
    pub project: &'a Project,
    pub today: Date,
    pub billings: &'a [SubscriptionBilling],
    pub unbilled: &'a [UnbilledEntry],
    pub tasks: &'a HashMap<Uuid, TaskRecord>,
    /// Accepted quotations by task.
    pub quotations: &'a HashMap<Uuid, ExpressQuotationRecord>,
    pub invoices: &'a [IssuedInvoiceRecord],
    pub positions: &'a [ManualPositionRecord],
    pub products: &'a [ProjectProductRecord],
    pub records: &'a HashMap<InvoiceId, PotentialInvoiceRecord>,
}

/// The day a row becomes billable and the month whose invoice carries it.
pub fn due(timing: BillingTiming, period: periods::Period) -> (Date, periods::Period) {
    match timing {
        BillingTiming::Arrears => (period.end.next_day().unwrap_or(period.end), periods::month_of(period.end)),
        BillingTiming::Advance => (period.start, periods::month_of(period.start)),
    }
}

/// The lines of one potential invoice, by kind.
#[derive(Default)]
struct Lines {
    subscriptions: Vec<SubscriptionLine>,
    tasks: Vec<TimeLine>,
    positions: Vec<PositionLine>,
    products: Vec<ProductLine>,
}

/// The project's potential invoices on `today`, by dateFrom then type: only non-empty ones.
pub fn compute(inputs: &Inputs) -> Vec<PotentialInvoice> {
    let minor = pricing::minor_units(&inputs.project.currency);
    let mut invoices: BTreeMap<(Date, InvoiceType), Lines> = BTreeMap::new();
    // A month an invoice issued outside the API covers whole is settled for subscriptions; a
    // line an issued invoice lists is billed (docs/billing.md). `invoices` are those in force.
    let settled = |month: periods::Period| {
        inputs.invoices.iter().any(|i| i.issued_outside() && i.date_from <= month.start && month.end <= i.date_to)
    };
    let issued: HashSet<&str> = inputs.invoices.iter().flat_map(|i| i.line_ids.iter().map(String::as_str)).collect();
    for billing in inputs.billings {
        for row in &billing.rows {
            let (due_on, month) =
                due(billing.billing_timing, periods::Period { start: row.period_start, end: row.period_end });
            let line_id = invoice_lines::subscription_row_line_id(row.billing_id);
            if inputs.today < due_on || settled(month) || issued.contains(line_id.as_str()) {
                continue;
            }
            let id = InvoiceId {
                kind: InvoiceType::Subscription,
                project_id: inputs.project.id,
                from: month.start,
                to: month.end,
            };
            let custom = inputs.records.get(&id).and_then(|r| r.quantities.get(&row.billing_id)).copied();
            let quantity = custom.map(Decimal::from).unwrap_or(row.quantity);
            let amount = crate::subscriptions::row_amount(
                row.unit_price,
                quantity,
                row.months,
                billing.frequency,
                billing.payment,
            );
            invoices.entry((month.start, InvoiceType::Subscription)).or_default().subscriptions.push(
                SubscriptionLine {
                    line_id,
                    billing_id: row.billing_id,
                    subscription_billing_id: billing.id,
                    title: billing.manual_title.clone(),
                    period_start: row.period_start,
                    period_end: row.period_end,
                    payment: billing.payment,
                    billing_timing: billing.billing_timing,
                    default_quantity: row.quantity,
                    quantity,
                    custom_quantity: custom.is_some(),
                    unit_price: row.unit_price,
                    amount: pricing::round_amount(amount, minor),
                },
            );
        }
    }
    // Imported products: on the subscription invoice of the month each charge is due, from
    // the day the product became active (`ProjectBilling`: the first period of the project's
    // earliest subscription billing).
    let billing_start = inputs.billings.iter().map(|b| periods::month_start(b.from_date)).min();
    for product in inputs.products {
        let Some(from) = invoice_lines::active_from(product, billing_start) else { continue };
        for line in invoice_lines::product_lines(product, from, inputs.today, minor) {
            let month = periods::month_of(line.due_on);
            if !settled(month) && !issued.contains(line.line_id.as_str()) {
                invoices.entry((month.start, InvoiceType::Subscription)).or_default().products.push(line);
            }
        }
    }
    // Manual positions: once, on the time invoice of the month each was created.
    for position in inputs.positions {
        let Some(created) = invoice_lines::utc_date(&position.created_at) else { continue };
        let line = invoice_lines::position_line(position, minor);
        if created <= inputs.today && !issued.contains(line.line_id.as_str()) {
            invoices.entry((periods::month_start(created), InvoiceType::Time)).or_default().positions.push(line);
        }
    }
    // Time: hours per (month, task); a quotation's amount goes on the task's first month.
    let mut hours: BTreeMap<(Date, Uuid), Decimal> = BTreeMap::new();
    let mut first_month: HashMap<Uuid, Date> = HashMap::new();
    for u in inputs.unbilled.iter().filter(|u| u.entry.date <= inputs.today) {
        let month = periods::month_start(u.entry.date);
        *hours.entry((month, u.entry.task_id)).or_default() += u.entry.hours;
        let first = first_month.entry(u.entry.task_id).or_insert(month);
        *first = (*first).min(month);
    }
    for ((month, task_id), hours) in hours {
        let task = inputs.tasks.get(&task_id);
        let rate = task.map(|t| t.effective_hour_rate(inputs.project)).unwrap_or(inputs.project.hour_rate);
        let quotation = inputs.quotations.get(&task_id);
        let amount = match quotation {
            None => pricing::round_amount(hours * rate, minor),
            Some(q) => {
                // Billed once: by an invoice issued here that billed the quotation, or one
                // issued outside the API that lists the task.
                let invoiced = inputs.invoices.iter().any(|i| match &i.issue {
                    Some(issue) => issue.quotation_ids.contains(&q.id),
                    None => i.task_ids.contains(&task_id),
                });
                if !invoiced && first_month.get(&task_id) == Some(&month) { q.sub_total } else { Decimal::ZERO }
            }
        };
        invoices.entry((month, InvoiceType::Time)).or_default().tasks.push(TimeLine {
            task_id,
            short_number: task.map(|t| t.short_number).unwrap_or_default(),
            title: task.map(|t| t.title.clone()).unwrap_or_default(),
            hours: hours.normalize(),
            hour_rate: rate,
            amount,
            express_quotation_id: quotation.map(|q| q.id),
        });
    }
    let mut all = Vec::new();
    for ((from, kind), mut lines) in invoices {
        lines
            .subscriptions
            .sort_by(|a, b| (a.period_start, &a.title, a.billing_id).cmp(&(b.period_start, &b.title, b.billing_id)));
        lines.tasks.sort_by_key(|l| (l.short_number, l.task_id));
        lines.positions.sort_by_key(|l| (l.sort, l.position_id));
        lines.products.sort_by(|a, b| (a.due_on, &a.name, &a.line_id).cmp(&(b.due_on, &b.name, &b.line_id)));
        let id = InvoiceId { kind, project_id: inputs.project.id, from, to: periods::month_end(from) };
        all.push(assemble(inputs, id, lines));
    }
    all.sort_by_key(|i| (i.date_from, i.kind));
    all
}

fn assemble(inputs: &Inputs, id: InvoiceId, lines: Lines) -> PotentialInvoice {
    let record = inputs.records.get(&id);
    let Lines { subscriptions, tasks, positions, products } = lines;
    let net_total: Decimal = subscriptions.iter().map(|l| l.amount).sum::<Decimal>()
        + tasks.iter().map(|l| l.amount).sum::<Decimal>()
        + positions.iter().map(|l| l.amount).sum::<Decimal>()
        + products.iter().map(|l| l.amount).sum::<Decimal>();
    PotentialInvoice {
        id: id.to_string(),
        kind: id.kind,
        project_id: id.project_id,
        date_from: id.from,
        date_to: id.to,
        billed_from: record.and_then(|r| r.billed_from).unwrap_or(id.from),
        billed_to: record.and_then(|r| r.billed_to).unwrap_or(id.to),
        contact_id: record.and_then(|r| r.contact_id),
        currency: inputs.project.currency.clone(),
        subscriptions,
        tasks,
        positions,
        products,
        net_total: net_total.normalize(),
        record_version: record.map_or(0, |r| r.version),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::project;
    use serde_json::json;
    use time::macros::date;
    use workapi_domain::billing::day;
    use workapi_domain::position::DiscountType;

    /// 10 a month from 1 January 2026 (renewing), imported on 1 January.
    fn monthly_product() -> ProjectProductRecord {
        let description = serde_json::to_value(workapi_richtext::Doc::empty()).unwrap();
        serde_json::from_value(json!({"id": Uuid::from_u128(2), "projectId": Uuid::from_u128(1),
            "product": {"id": Uuid::from_u128(3), "categoryId": Uuid::nil(), "name": "Hosting",
                "description": description, "priceSubscription": 10, "priceUnitName": null,
                "priceFrequency": 1, "contractPeriodMonths": 12, "renewalMode": "Automatic",
                "variants": [], "options": [], "createdAt": "2026-01-01T00:00:00Z"},
            "quantity": 1, "options": [], "customPrices": [], "activeVariantId": null,
            "activeFromType": "Immediately", "activeFromFixedDate": null, "contractPeriodMonths": 12,
            "priceFrequency": 1, "renewalMode": "Automatic", "createdAt": "2026-01-01T09:00:00Z",
            "createdBy": Uuid::nil()}))
        .unwrap()
    }

    fn position() -> ManualPositionRecord {
        ManualPositionRecord {
            id: Uuid::from_u128(4),
            project_id: Uuid::from_u128(1),
            name: "Setup".into(),
            description: workapi_richtext::Doc::empty(),
            price: Decimal::from(250),
            category_id: None,
            discount_type: DiscountType::Fixed,
            discount_amount: Decimal::from(30),
            sort: 1,
            created_at: "2026-03-10T12:00:00.000Z".into(),
            created_by: Uuid::nil(),
        }
    }

    fn issued(from: Date, to: Date, line_ids: Vec<String>) -> IssuedInvoiceRecord {
        IssuedInvoiceRecord {
            id: Uuid::new_v4(),
            project_id: Uuid::from_u128(1),
            number: "RE-1".into(),
            date_from: from,
            date_to: to,
            consumed: vec![],
            task_ids: vec![],
            line_ids,
            issue: None,
            cancelled_by: None,
        }
    }

    /// (type, dateFrom, line ids, netTotal) of each potential invoice.
    fn run(today: Date, invoices: &[IssuedInvoiceRecord]) -> Vec<(InvoiceType, String, Vec<String>, Decimal)> {
        run_with(today, invoices, &[], monthly_product())
    }

    fn run_with(
        today: Date,
        invoices: &[IssuedInvoiceRecord],
        billings: &[SubscriptionBilling],
        product: ProjectProductRecord,
    ) -> Vec<(InvoiceType, String, Vec<String>, Decimal)> {
        let (project, products, positions) = (project(), [product], [position()]);
        let inputs = Inputs {
            project: &project,
            today,
            billings,
            unbilled: &[],
            tasks: &HashMap::new(),
            quotations: &HashMap::new(),
            invoices,
            positions: &positions,
            products: &products,
            records: &HashMap::new(),
        };
        compute(&inputs)
            .into_iter()
            .map(|i| {
                let ids =
                    i.products.iter().map(|l| l.line_id.clone()).chain(i.positions.iter().map(|l| l.line_id.clone()));
                (i.kind, day::text(i.date_from), ids.collect(), i.net_total)
            })
            .collect()
    }

    #[test]
    fn positions_and_products_land_on_their_type_and_month_until_issued() {
        let product = |start: &str| format!("product:{}:subscription:{start}", Uuid::from_u128(2));
        let position = format!("position:{}", Uuid::from_u128(4));
        let sub = InvoiceType::Subscription;
        // 9 March: the position (created 10 March) is not due yet.
        assert_eq!(
            run(date!(2026 - 03 - 09), &[]),
            [
                (sub, "2026-01-01".into(), vec![product("2026-01-01")], Decimal::from(10)),
                (sub, "2026-02-01".into(), vec![product("2026-02-01")], Decimal::from(10)),
                (sub, "2026-03-01".into(), vec![product("2026-03-01")], Decimal::from(10)),
            ]
        );
        let all = run(date!(2026 - 03 - 10), &[]);
        assert_eq!(all[3], (InvoiceType::Time, "2026-03-01".into(), vec![position.clone()], Decimal::from(220)));
        // February settled by an invoice covering it whole; March's charge and the position
        // listed by another: only January is left.
        let invoices = [
            issued(date!(2026 - 02 - 01), date!(2026 - 02 - 28), vec![]),
            issued(date!(2026 - 03 - 05), date!(2026 - 03 - 05), vec![product("2026-03-01"), position]),
        ];
        assert_eq!(
            run(date!(2026 - 03 - 31), &invoices),
            [(sub, "2026-01-01".into(), vec![product("2026-01-01")], Decimal::from(10))]
        );
    }

    /// A billing of the project from `from` (its rows are not the point: none).
    fn billing_from(from: Date) -> SubscriptionBilling {
        SubscriptionBilling {
            id: Uuid::new_v4(),
            project_id: Uuid::from_u128(1),
            manual_title: "Hosting".into(),
            from_date: from,
            to_date: from,
            frequency: 1,
            payment: crate::subscriptions::Payment::Fixed,
            price: Decimal::ONE,
            quantity: Decimal::ONE,
            billing_timing: BillingTiming::Arrears,
            subscription_type: crate::subscriptions::SubscriptionType::Manual,
            currency: "EUR".into(),
            created_at: String::new(),
            created_by: Uuid::nil(),
            rows: vec![],
        }
    }

    /// `ProjectBilling`: from the first month of the project's earliest subscription billing,
    /// not before the import (1 January 2026); nothing while the project has no billing.
    #[test]
    fn a_product_active_with_the_project_s_billing_starts_with_its_earliest_billing() {
        let mut product = monthly_product();
        product.import.active_from_type = workapi_domain::catalog::ActiveFromType::ProjectBilling;
        let months = |billings: &[SubscriptionBilling]| -> Vec<String> {
            run_with(date!(2026 - 03 - 09), &[], billings, product.clone()).into_iter().map(|i| i.1).collect()
        };
        assert_eq!(months(&[]), Vec::<String>::new());
        let later = [billing_from(date!(2026 - 03 - 20)), billing_from(date!(2026 - 02 - 15))];
        assert_eq!(months(&later), ["2026-02-01", "2026-03-01"], "from 1 February, the earliest billing's month");
        assert_eq!(months(&[billing_from(date!(2025 - 06 - 01))]), ["2026-01-01", "2026-02-01", "2026-03-01"]);
    }

    #[test]
    fn arrears_rows_are_due_after_their_period_and_advance_rows_from_its_first_day() {
        let q1 = periods::Period { start: date!(2026 - 01 - 01), end: date!(2026 - 03 - 31) };
        assert_eq!(due(BillingTiming::Arrears, q1), (date!(2026 - 04 - 01), periods::month_of(date!(2026 - 03 - 01))));
        assert_eq!(due(BillingTiming::Advance, q1), (date!(2026 - 01 - 01), periods::month_of(date!(2026 - 01 - 01))));
    }
}
