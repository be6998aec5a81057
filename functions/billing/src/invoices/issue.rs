//! What issuing a potential invoice records (a pure function of what was read), and the one
//! transaction that writes it with the workspace's next number (docs/billing.md, "Issuing").

use super::model::IssuedDocument;
use crate::contingents;
use crate::potential_invoices::id::{InvoiceId, InvoiceType};
use crate::potential_invoices::model::PotentialInvoice;
use crate::potential_invoices::record::PotentialInvoiceRecord;
use crate::world::UnbilledEntry;
use rust_decimal::Decimal;
use std::collections::BTreeSet;
use time::Date;
use uuid::Uuid;
use workapi_domain::billing::{self, DocumentKind, Issue, IssuedInvoiceRecord, SupportContingentRecord};
use workapi_domain::pricing;
use workapi_domain::project::Project;
use workapi_kit::entity::{self, Attempt, Recorded};
use workapi_kit::{ApiError, ApiResult};
use workapi_store::keys::WsKeys;
use workapi_store::limits::{MAX_ITEM_BYTES, item_size};
use workapi_store::{Condition, Item, Store, StoreError, TxOp};

/// Who issues, when (the business date and the instant).
pub struct Issuer {
    pub user_id: Uuid,
    pub today: Date,
    pub at: String,
}

/// The invoice issuing `potential` records, numbered later ([`write`]): its lines and totals
/// frozen, the line ids of its subscription rows, positions and products, its time entries
/// (the unbilled time of its month up to today), the tasks of its time lines, the quotations
/// whose subTotal it bills, and the hours its time draws from the contingents (time a task's
/// accepted quotation replaces draws none, as in the balances).
pub fn record(
    project: &Project,
    potential: &PotentialInvoice,
    unbilled: &[UnbilledEntry],
    contingents: &[SupportContingentRecord],
    issuer: &Issuer,
) -> ApiResult<IssuedInvoiceRecord> {
    let in_month = |e: &&UnbilledEntry| {
        potential.kind == InvoiceType::Time
            && potential.date_from <= e.entry.date
            && e.entry.date <= potential.date_to
            && e.entry.date <= issuer.today
    };
    let entries: Vec<&UnbilledEntry> = unbilled.iter().filter(in_month).collect();
    let time: Vec<(Date, Decimal)> =
        entries.iter().filter(|e| e.quotation.is_none()).map(|e| (e.entry.date, e.entry.hours)).collect();
    let line_ids = potential
        .subscriptions
        .iter()
        .map(|l| l.line_id.clone())
        .chain(potential.positions.iter().map(|l| l.line_id.clone()))
        .chain(potential.products.iter().map(|l| l.line_id.clone()))
        .collect();
    let task_ids: BTreeSet<Uuid> = potential.tasks.iter().map(|l| l.task_id).collect();
    let quotation_ids =
        potential.tasks.iter().filter(|l| !l.amount.is_zero()).filter_map(|l| l.express_quotation_id).collect();
    let minor = pricing::minor_units(&project.currency);
    let tax = pricing::round_amount(potential.net_total * project.tax_rate / Decimal::ONE_HUNDRED, minor);
    let document = IssuedDocument {
        billed_from: potential.billed_from,
        billed_to: potential.billed_to,
        contact_id: potential.contact_id,
        currency: potential.currency.clone(),
        subscriptions: potential.subscriptions.clone(),
        tasks: potential.tasks.clone(),
        positions: potential.positions.clone(),
        products: potential.products.clone(),
        net_total: potential.net_total,
        tax_rate: project.tax_rate.normalize(),
        tax: tax.normalize(),
        total: (potential.net_total + tax).normalize(),
    };
    Ok(IssuedInvoiceRecord {
        id: Uuid::new_v4(),
        project_id: project.id,
        number: String::new(),
        date_from: potential.date_from,
        date_to: potential.date_to,
        consumed: contingents::consumption(contingents, &time),
        task_ids: task_ids.into_iter().collect(),
        line_ids,
        issue: Some(Issue {
            kind: DocumentKind::Invoice,
            sequence: 0,
            potential_invoice_id: Some(potential.id.clone()),
            time_entry_ids: entries.iter().map(|e| e.entry.id).collect(),
            quotation_ids,
            cancels: None,
            issued_on: issuer.today,
            issued_at: issuer.at.clone(),
            issued_by: issuer.user_id,
            document: serde_json::to_value(document).map_err(ApiError::internal)?,
        }),
        cancelled_by: None,
    })
}

/// The credit note cancelling `invoice`, numbered later: the invoice's range, recipient and
/// currency, no lines, its totals negated; it bills nothing and lists nothing, so what the
/// invoice billed is free again once the invoice is marked cancelled.
pub fn credit_note(invoice: &IssuedInvoiceRecord, currency: &str, issuer: &Issuer) -> ApiResult<IssuedInvoiceRecord> {
    let issued = match &invoice.issue {
        Some(issue) => {
            Some(serde_json::from_value::<IssuedDocument>(issue.document.clone()).map_err(ApiError::internal)?)
        }
        None => None,
    };
    let document = IssuedDocument {
        billed_from: issued.as_ref().map_or(invoice.date_from, |d| d.billed_from),
        billed_to: issued.as_ref().map_or(invoice.date_to, |d| d.billed_to),
        contact_id: issued.as_ref().and_then(|d| d.contact_id),
        currency: issued.as_ref().map_or_else(|| currency.to_owned(), |d| d.currency.clone()),
        subscriptions: vec![],
        tasks: vec![],
        positions: vec![],
        products: vec![],
        net_total: -issued.as_ref().map_or(Decimal::ZERO, |d| d.net_total),
        tax_rate: issued.as_ref().map_or(Decimal::ZERO, |d| d.tax_rate),
        tax: -issued.as_ref().map_or(Decimal::ZERO, |d| d.tax),
        total: -issued.as_ref().map_or(Decimal::ZERO, |d| d.total),
    };
    Ok(IssuedInvoiceRecord {
        id: Uuid::new_v4(),
        project_id: invoice.project_id,
        number: String::new(),
        date_from: invoice.date_from,
        date_to: invoice.date_to,
        consumed: vec![],
        task_ids: vec![],
        line_ids: vec![],
        issue: Some(Issue {
            kind: DocumentKind::CreditNote,
            sequence: 0,
            potential_invoice_id: invoice.issue.as_ref().and_then(|i| i.potential_invoice_id.clone()),
            time_entry_ids: vec![],
            quotation_ids: vec![],
            cancels: Some(invoice.id),
            issued_on: issuer.today,
            issued_at: issuer.at.clone(),
            issued_by: issuer.user_id,
            document: serde_json::to_value(document).map_err(ApiError::internal)?,
        }),
        cancelled_by: None,
    })
}

/// What [`write`] came to.
pub enum Written<A> {
    /// Written; the answer built from the numbered record.
    Done(A),
    /// A condition beside the sequence failed (`also`'s, by index): nothing was written; the
    /// caller reads again.
    Refused(Vec<usize>),
}

/// Largest stored invoice: DynamoDB's item limit, less room for the keys and the recorded
/// answer's own item is separate.
pub const MAX_INVOICE_BYTES: usize = MAX_ITEM_BYTES - 4 * 1024;

/// An invoice over [`MAX_INVOICE_BYTES`]: a 400 naming the limit (nothing is written).
fn within_limit(item: &Item) -> ApiResult<()> {
    let size = item_size(item);
    if size <= MAX_INVOICE_BYTES {
        return Ok(());
    }
    Err(ApiError::field(
        "id",
        format!(
            "The invoice would take {} KB, over the {} KB an invoice may hold: it has too many lines or time \
             entries to issue as one",
            size.div_ceil(1024),
            MAX_INVOICE_BYTES / 1024
        ),
    ))
}

/// Writes `record` with the workspace's next number in one transaction: the invoice (new),
/// the sequence moved on from the number read (on the condition that it still holds it), the
/// writes `also` made with it (conditioned by the caller: the potential invoice's settings
/// version, the cancelled invoice's mark) and the idempotency completion. A lost race on the
/// sequence alone reads the number again and retries; any other failed condition is
/// [`Written::Refused`]. An invoice over [`MAX_INVOICE_BYTES`] is a 400 naming the limit.
pub async fn write<A: Recorded>(
    store: &dyn Store,
    keys: WsKeys,
    record: &IssuedInvoiceRecord,
    also: Vec<TxOp>,
    respond: impl Fn(&IssuedInvoiceRecord) -> ApiResult<A>,
) -> ApiResult<Written<A>> {
    let sequence = billing::invoice_sequence(keys);
    let busy = "Invoices are being issued concurrently; retry";
    entity::retry_on_conflict(busy, |_| {
        let (sequence, also) = (sequence.clone(), also.clone());
        let respond = &respond;
        async move {
            let last = store.get(&sequence).await?.and_then(|item| item.get(workapi_store::VERSION)?.as_i64());
            let number = last.unwrap_or(0) + 1;
            let mut numbered = record.clone();
            numbered.number = number.to_string();
            if let Some(issue) = numbered.issue.as_mut() {
                issue.sequence = number;
            }
            let item = entity::to_item(&numbered, keys)?;
            within_limit(&item)?;
            let mut counter = Item::new();
            counter.insert(workapi_store::PK.into(), sequence.pk.clone().into());
            counter.insert(workapi_store::SK.into(), sequence.sk.clone().into());
            counter.insert(workapi_store::ENTITY.into(), entity::SEQUENCE.name.into());
            counter.insert(workapi_store::VERSION.into(), number.into());
            let taken = last.map_or(Condition::NotExists, Condition::VersionEquals);
            let beside = also.len();
            let mut ops = also;
            ops.push(TxOp::Put { item, cond: Condition::NotExists });
            ops.push(TxOp::Put { item: counter, cond: taken });
            let answer = respond(&numbered)?;
            match entity::transact(store, ops, answer.completion()).await {
                Ok(()) => Ok(Attempt::Done(Written::Done(answer))),
                Err(StoreError::TransactionCancelled { failed }) if failed.iter().any(|i| *i < beside) => {
                    Ok(Attempt::Done(Written::Refused(failed.into_iter().filter(|i| *i < beside).collect())))
                }
                // The sequence moved on (or a concurrent transaction on these items): take the
                // next number. A failed completion (the idempotency claim no longer ours) is an
                // error, as for every create.
                Err(StoreError::TransactionCancelled { failed }) if failed.is_empty() || failed == [beside + 1] => {
                    Ok(Attempt::Conflict)
                }
                Err(e) => Err(e.into()),
            }
        }
    })
    .await
}

/// The write that marks a potential invoice issued: its settings record's next version, on
/// the condition that the version it was computed from is still the stored one (none stored:
/// still none), so two issues of one potential invoice, or an issue racing a change of its
/// settings, cannot both land.
pub fn settings_guard(
    keys: WsKeys,
    id: InvoiceId,
    stored: Option<&PotentialInvoiceRecord>,
    seen: i64,
) -> ApiResult<TxOp> {
    let mut next = stored.cloned().unwrap_or_else(|| PotentialInvoiceRecord::new(id));
    next.version = seen + 1;
    let cond = if seen == 0 { Condition::NotExists } else { Condition::VersionEquals(seen) };
    Ok(TxOp::Put { item: entity::to_item(&next, keys)?, cond })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::project;
    use crate::potential_invoices::model::TimeLine;
    use time::macros::date;
    use workapi_domain::billing::TimeEntryRecord;

    fn entry(id: u128, task: u128, date: Date, hours: i64) -> UnbilledEntry {
        UnbilledEntry {
            entry: TimeEntryRecord {
                id: Uuid::from_u128(id),
                project_id: Uuid::from_u128(1),
                task_id: Uuid::from_u128(task),
                date,
                hours: Decimal::from(hours),
                billed: false,
            },
            quotation: None,
        }
    }

    fn contingent(from: Date) -> SupportContingentRecord {
        SupportContingentRecord {
            id: Uuid::from_u128(9),
            project_id: Uuid::from_u128(1),
            title: "Retainer".into(),
            from_date: from,
            to_date: None,
            frequency: 1,
            hours: Decimal::from(10),
            transferable: false,
            created_at: String::new(),
            updated_at: String::new(),
        }
    }

    /// March's time invoice, issued on 2 April: 2 h and 3 h at 100 on task 5, 19 % tax.
    #[test]
    fn an_issued_time_invoice_freezes_its_totals_and_lists_its_entries_tasks_and_contingent_hours() {
        let potential = PotentialInvoice {
            id: format!("time::{}::2026-03-01::2026-03-31", Uuid::from_u128(1)),
            kind: InvoiceType::Time,
            project_id: Uuid::from_u128(1),
            date_from: date!(2026 - 03 - 01),
            date_to: date!(2026 - 03 - 31),
            billed_from: date!(2026 - 03 - 01),
            billed_to: date!(2026 - 03 - 31),
            contact_id: None,
            currency: "EUR".into(),
            subscriptions: vec![],
            tasks: vec![TimeLine {
                task_id: Uuid::from_u128(5),
                short_number: 1,
                title: "Fix".into(),
                hours: Decimal::from(5),
                hour_rate: Decimal::from(100),
                amount: Decimal::new(50050, 2),
                express_quotation_id: None,
            }],
            positions: vec![],
            products: vec![],
            net_total: Decimal::new(50050, 2),
            record_version: 0,
        };
        let unbilled = [
            entry(11, 5, date!(2026 - 03 - 10), 2),
            entry(12, 5, date!(2026 - 03 - 20), 3),
            // Another month's time is not this invoice's.
            entry(13, 5, date!(2026 - 04 - 01), 7),
        ];
        let issuer = Issuer { user_id: Uuid::nil(), today: date!(2026 - 04 - 02), at: "2026-04-02T12:00:00Z".into() };
        // Monthly from 15 January: 10–14 March in one period, 20 March in the next.
        let record = record(&project(), &potential, &unbilled, &[contingent(date!(2026 - 01 - 15))], &issuer).unwrap();
        let issue = record.issue.as_ref().unwrap();
        assert_eq!(issue.time_entry_ids, [Uuid::from_u128(11), Uuid::from_u128(12)]);
        assert_eq!(record.task_ids, [Uuid::from_u128(5)]);
        let consumed: Vec<(Date, Decimal)> = record.consumed.iter().map(|c| (c.date.unwrap(), c.hours)).collect();
        assert_eq!(consumed, [(date!(2026 - 03 - 10), Decimal::from(2)), (date!(2026 - 03 - 20), Decimal::from(3))]);
        let document: IssuedDocument = serde_json::from_value(issue.document.clone()).unwrap();
        // 500.50 × 19 % = 95.095 → 95.10 (half away from zero); 500.50 + 95.10 = 595.60.
        assert_eq!((document.tax, document.total), (Decimal::new(9510, 2), Decimal::new(59560, 2)));
        // Its credit note negates the totals, lists nothing and names it.
        let note = credit_note(&record, "EUR", &issuer).unwrap();
        let cancelling = note.issue.as_ref().unwrap();
        assert_eq!((cancelling.kind, cancelling.cancels), (DocumentKind::CreditNote, Some(record.id)));
        let negated: IssuedDocument = serde_json::from_value(cancelling.document.clone()).unwrap();
        assert_eq!((negated.net_total, negated.total), (Decimal::new(-50050, 2), Decimal::new(-59560, 2)));
        assert!(note.line_ids.is_empty() && note.consumed.is_empty() && !note.in_force());
    }

    /// The bound of one invoice item: a month of 12,000 time entries does not fit (a 400 naming
    /// the limit); 1,000 do.
    #[test]
    fn an_invoice_over_the_item_limit_is_refused_naming_it() {
        let issuer = Issuer { user_id: Uuid::nil(), today: date!(2026 - 04 - 02), at: String::new() };
        let invoice = |entries: u128| {
            let mut record = credit_note(
                &IssuedInvoiceRecord {
                    id: Uuid::from_u128(1),
                    project_id: Uuid::from_u128(1),
                    number: "1".into(),
                    date_from: date!(2026 - 03 - 01),
                    date_to: date!(2026 - 03 - 31),
                    consumed: vec![],
                    task_ids: vec![],
                    line_ids: vec![],
                    issue: None,
                    cancelled_by: None,
                },
                "EUR",
                &issuer,
            )
            .unwrap();
            record.issue.as_mut().unwrap().time_entry_ids = (0..entries).map(Uuid::from_u128).collect();
            entity::to_item(&record, WsKeys::new(Uuid::nil())).unwrap()
        };
        assert!(within_limit(&invoice(1_000)).is_ok());
        let refused = within_limit(&invoice(12_000)).unwrap_err();
        assert_eq!(refused.status.as_u16(), 400);
        let message = &refused.errors.unwrap()["id"][0];
        assert!(message.contains("over the 396 KB an invoice may hold"), "{message}");
    }
}
