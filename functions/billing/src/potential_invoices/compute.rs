//! The computation (a pure function of what was read): which subscription rows are due and
//! which time is unbilled, grouped into potential invoices by type and calendar month.

use super::id::{InvoiceId, InvoiceType};
use super::model::{PotentialInvoice, SubscriptionLine, TimeLine};
use super::record::PotentialInvoiceRecord;
use crate::periods;
use crate::subscriptions::{BillingTiming, SubscriptionBilling};
use crate::world::UnbilledEntry;
use rust_decimal::Decimal;
use std::collections::{BTreeMap, HashMap};
use time::Date;
use uuid::Uuid;
use workapi_domain::billing::IssuedInvoiceRecord;
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
    pub records: &'a HashMap<InvoiceId, PotentialInvoiceRecord>,
}

/// The day a row becomes billable and the month whose invoice carries it.
pub fn due(timing: BillingTiming, period: periods::Period) -> (Date, periods::Period) {
    match timing {
        BillingTiming::Arrears => (period.end.next_day().unwrap_or(period.end), periods::month_of(period.end)),
        BillingTiming::Advance => (period.start, periods::month_of(period.start)),
    }
}

/// The project's potential invoices on `today`, by dateFrom then type: only non-empty ones.
pub fn compute(inputs: &Inputs) -> Vec<PotentialInvoice> {
    let minor = pricing::minor_units(&inputs.project.currency);
    let mut subscriptions: BTreeMap<(Date, Date), Vec<SubscriptionLine>> = BTreeMap::new();
    for billing in inputs.billings {
        for row in &billing.rows {
            let (due_on, month) =
                due(billing.billing_timing, periods::Period { start: row.period_start, end: row.period_end });
            let settled = inputs.invoices.iter().any(|i| i.date_from <= month.start && month.end <= i.date_to);
            if inputs.today < due_on || settled {
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
            subscriptions.entry((month.start, month.end)).or_default().push(SubscriptionLine {
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
            });
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
    let mut time: BTreeMap<Date, Vec<TimeLine>> = BTreeMap::new();
    for ((month, task_id), hours) in hours {
        let task = inputs.tasks.get(&task_id);
        let rate = task.map(|t| t.effective_hour_rate(inputs.project)).unwrap_or(inputs.project.hour_rate);
        let quotation = inputs.quotations.get(&task_id);
        let amount = match quotation {
            None => pricing::round_amount(hours * rate, minor),
            Some(q) => {
                let invoiced = inputs.invoices.iter().any(|i| i.task_ids.contains(&task_id));
                if !invoiced && first_month.get(&task_id) == Some(&month) { q.sub_total } else { Decimal::ZERO }
            }
        };
        time.entry(month).or_default().push(TimeLine {
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
    for ((from, to), mut lines) in subscriptions {
        lines.sort_by(|a, b| (a.period_start, &a.title, a.billing_id).cmp(&(b.period_start, &b.title, b.billing_id)));
        let id = InvoiceId { kind: InvoiceType::Subscription, project_id: inputs.project.id, from, to };
        all.push(assemble(inputs, id, lines, Vec::new()));
    }
    for (from, mut lines) in time {
        lines.sort_by_key(|l| (l.short_number, l.task_id));
        let id =
            InvoiceId { kind: InvoiceType::Time, project_id: inputs.project.id, from, to: periods::month_end(from) };
        all.push(assemble(inputs, id, Vec::new(), lines));
    }
    all.sort_by_key(|i| (i.date_from, i.kind));
    all
}

fn assemble(
    inputs: &Inputs,
    id: InvoiceId,
    subscriptions: Vec<SubscriptionLine>,
    tasks: Vec<TimeLine>,
) -> PotentialInvoice {
    let record = inputs.records.get(&id);
    let net_total: Decimal =
        subscriptions.iter().map(|l| l.amount).sum::<Decimal>() + tasks.iter().map(|l| l.amount).sum::<Decimal>();
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
        net_total: net_total.normalize(),
        record_version: record.map_or(0, |r| r.version),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::date;

    #[test]
    fn arrears_rows_are_due_after_their_period_and_advance_rows_from_its_first_day() {
        let q1 = periods::Period { start: date!(2026 - 01 - 01), end: date!(2026 - 03 - 31) };
        assert_eq!(due(BillingTiming::Arrears, q1), (date!(2026 - 04 - 01), periods::month_of(date!(2026 - 03 - 01))));
        assert_eq!(due(BillingTiming::Advance, q1), (date!(2026 - 01 - 01), periods::month_of(date!(2026 - 01 - 01))));
    }
}
