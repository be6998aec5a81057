//! Support contingents (spec §2.5a, §4.7; formulas in docs/billing.md): seeded retainer plans
//! whose balances are computed on every read from the issued invoices and the unbilled time,
//! by the business clock (`LT_CUSTOM_NOW` for imposter-capable callers).

use crate::ProjectPath;
use crate::periods::{self, Period};
use axum::extract::State;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use time::Date;
use uuid::Uuid;
use workapi_domain::billing::{self, ContingentConsumption, IssuedInvoiceRecord, SupportContingentRecord, day};
use workapi_domain::money;
use workapi_domain::permissions::Requirement;
use workapi_domain::project;
use workapi_kit::paging::{OrderKey, PageParams, Paged, Paging};
use workapi_kit::request::Path;
use workapi_kit::{ApiResult, AppState, Caller};

/// A support contingent with its balance (spec §2.5a).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(examples(json!({"id": "c0a1b2c3-d4e5-4f60-8172-93a4b5c6d7e8", "projectId": "5d8e4c1a-6b2f-4e7a-9c3d-1f2a3b4c5d6e",
    "title": "Support retainer", "fromDate": "2026-01-01", "frequency": 1, "hours": 10, "transferable": true,
    "isActive": true, "availableHours": 9, "availableByContract": 6, "consumedHours": 4,
    "transferableFromPrevious": 5, "potentiallyUsedByTasks": 2, "currentPeriodStart": "2026-03-01",
    "currentPeriodEnd": "2026-03-31", "currentPeriodHasNoEndDate": false,
    "createdAt": "2026-01-01T08:00:00.000Z", "updatedAt": "2026-01-01T08:00:00.000Z"})))]
pub struct SupportContingent {
    pub id: Uuid,
    pub project_id: Uuid,
    pub title: String,
    #[serde(with = "day")]
    #[schema(value_type = String, format = Date)]
    pub from_date: Date,
    /// Absent: active forever
    #[serde(with = "day::option", skip_serializing_if = "Option::is_none", default)]
    #[schema(value_type = Option<String>, format = Date)]
    pub to_date: Option<Date>,
    /// Months per period; 0 is one open period from fromDate
    pub frequency: u32,
    /// Hours per period
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub hours: Decimal,
    /// Whether unused hours carry over to the next period
    pub transferable: bool,
    /// Today (the business clock) lies within fromDate and toDate
    pub is_active: bool,
    /// availableByContract + transferableFromPrevious − potentiallyUsedByTasks
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub available_hours: Decimal,
    /// hours − consumedHours (negative when overdrawn)
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub available_by_contract: Decimal,
    /// Hours the issued invoices drew from this contingent in the current period
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub consumed_hours: Decimal,
    /// Unused hours carried into the current period (transferable contingents; 0 otherwise)
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub transferable_from_previous: Decimal,
    /// Unbilled hours booked on the project's tasks in the current period up to today, except
    /// tasks whose accepted express quotation replaces their time
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub potentially_used_by_tasks: Decimal,
    /// Absent when the contingent is not active
    #[serde(with = "day::option", skip_serializing_if = "Option::is_none", default)]
    #[schema(value_type = Option<String>, format = Date)]
    pub current_period_start: Option<Date>,
    /// Absent when not active; today when currentPeriodHasNoEndDate
    #[serde(with = "day::option", skip_serializing_if = "Option::is_none", default)]
    #[schema(value_type = Option<String>, format = Date)]
    pub current_period_end: Option<Date>,
    /// True when the current period has no end (frequency 0 without toDate): currentPeriodEnd
    /// is then today, for display only. Absent when not active.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub current_period_has_no_end_date: Option<bool>,
    #[schema(format = DateTime)]
    pub created_at: String,
    #[schema(format = DateTime)]
    pub updated_at: String,
}

/// Unbilled time that may draw on a contingent: (date, hours).
pub type UnbilledTime = [(Date, Decimal)];

/// The current period of a contingent on `today`, and its index (0 for frequency 0); the
/// second value is whether the period has no end date.
fn current_period(c: &SupportContingentRecord, today: Date) -> Option<(u32, Period, bool)> {
    if c.frequency == 0 {
        let active = c.from_date <= today && c.to_date.is_none_or(|to| today <= to);
        return active.then(|| {
            let open = c.to_date.is_none();
            (0, Period { start: c.from_date, end: c.to_date.unwrap_or(today) }, open)
        });
    }
    periods::period_containing(c.from_date, c.frequency, c.to_date, today).map(|(k, p)| (k, p, false))
}

/// What the invoices drew from the contingent: (the day each draw counts on, hours). A draw
/// counts on its own `date` (the time it billed, issued through the API) or the invoice's
/// `dateTo` (the end of the service it bills).
fn draws<'a>(
    c: &'a SupportContingentRecord,
    invoices: &'a [IssuedInvoiceRecord],
) -> impl Iterator<Item = (Date, Decimal)> + 'a {
    invoices
        .iter()
        .flat_map(move |i| i.consumed.iter().filter(move |u| u.contingent_id == c.id).map(move |u| (u.day(i), u.hours)))
}

/// Hours the invoices drew from the contingent in a period.
fn consumed_in(c: &SupportContingentRecord, invoices: &[IssuedInvoiceRecord], period: Period, open: bool) -> Decimal {
    draws(c, invoices).filter(|(on, _)| period.contains(*on) || (open && *on >= period.start)).map(|(_, h)| h).sum()
}

/// The hours carried into period `k` of a transferable contingent: carry(0) = 0,
/// carry(j + 1) = max(0, hours + carry(j) − consumed(j)). Computed from the invoices, not by
/// walking the periods: a run of m periods that consumed nothing takes carry to
/// max(0, carry + m × hours) in one step, so the work is one pass over the invoices however
/// many periods lie between `fromDate` and today.
fn carried_into(c: &SupportContingentRecord, k: u32, invoices: &[IssuedInvoiceRecord]) -> Decimal {
    let mut consumed: BTreeMap<u32, Decimal> = BTreeMap::new();
    for (on, hours) in draws(c, invoices) {
        match periods::period_containing(c.from_date, c.frequency, c.to_date, on) {
            Some((j, _)) if j < k && !hours.is_zero() => *consumed.entry(j).or_default() += hours,
            _ => {}
        }
    }
    let idle = |carry: Decimal, periods: u32| (carry + c.hours * Decimal::from(periods)).max(Decimal::ZERO);
    let (mut carry, mut next) = (Decimal::ZERO, 0);
    for (j, hours) in consumed {
        carry = (c.hours + idle(carry, j - next) - hours).max(Decimal::ZERO);
        next = j + 1;
    }
    idle(carry, k - next)
}

/// The contingent whose hours a day's time draws on: the first (by fromDate, title, id) whose
/// range holds the day, with the index of the period holding it.
pub fn drawing_on(contingents: &[SupportContingentRecord], day: Date) -> Option<(Uuid, u32)> {
    let mut candidates: Vec<&SupportContingentRecord> = contingents.iter().collect();
    candidates.sort_by(|a, b| (a.from_date, &a.title, a.id).cmp(&(b.from_date, &b.title, b.id)));
    candidates.into_iter().find_map(|c| {
        if c.frequency == 0 {
            let holds = c.from_date <= day && c.to_date.is_none_or(|to| day <= to);
            return holds.then_some((c.id, 0));
        }
        periods::period_containing(c.from_date, c.frequency, c.to_date, day).map(|(k, _)| (c.id, k))
    })
}

/// What billing `time` (day, hours) draws from the contingents: per contingent and period,
/// the hours, counted on the period's last day of time.
pub fn consumption(contingents: &[SupportContingentRecord], time: &UnbilledTime) -> Vec<ContingentConsumption> {
    let mut drawn: BTreeMap<(Uuid, u32), (Date, Decimal)> = BTreeMap::new();
    for (day, hours) in time {
        if let Some(at) = drawing_on(contingents, *day) {
            let entry = drawn.entry(at).or_insert((*day, Decimal::ZERO));
            entry.0 = entry.0.max(*day);
            entry.1 += *hours;
        }
    }
    drawn
        .into_iter()
        .filter(|(_, (_, hours))| !hours.is_zero())
        .map(|((contingent_id, _), (date, hours))| ContingentConsumption {
            contingent_id,
            hours: hours.normalize(),
            date: Some(date),
        })
        .collect()
}

/// The balance of a contingent on `today` (docs/billing.md, "Support contingents").
pub fn balance(
    c: &SupportContingentRecord,
    today: Date,
    invoices: &[IssuedInvoiceRecord],
    unbilled: &UnbilledTime,
) -> SupportContingent {
    let mut out = SupportContingent {
        id: c.id,
        project_id: c.project_id,
        title: c.title.clone(),
        from_date: c.from_date,
        to_date: c.to_date,
        frequency: c.frequency,
        hours: c.hours,
        transferable: c.transferable,
        is_active: false,
        available_hours: Decimal::ZERO,
        available_by_contract: Decimal::ZERO,
        consumed_hours: Decimal::ZERO,
        transferable_from_previous: Decimal::ZERO,
        potentially_used_by_tasks: Decimal::ZERO,
        current_period_start: None,
        current_period_end: None,
        current_period_has_no_end_date: None,
        created_at: c.created_at.clone(),
        updated_at: c.updated_at.clone(),
    };
    let Some((k, period, open)) = current_period(c, today) else {
        return out;
    };
    let consumed = consumed_in(c, invoices, period, open);
    let carry = if c.transferable && c.frequency > 0 { carried_into(c, k, invoices) } else { Decimal::ZERO };
    let used: Decimal =
        unbilled.iter().filter(|(date, _)| period.contains(*date) && *date <= today).map(|(_, hours)| *hours).sum();
    out.is_active = true;
    out.consumed_hours = consumed.normalize();
    out.available_by_contract = (c.hours - consumed).normalize();
    out.transferable_from_previous = carry.normalize();
    out.potentially_used_by_tasks = used.normalize();
    out.available_hours = (c.hours - consumed + carry - used).normalize();
    out.current_period_start = Some(period.start);
    out.current_period_end = Some(if open { today } else { period.end });
    out.current_period_has_no_end_date = Some(open);
    out
}

/// Active first, then by fromDate (then title and id, so the order is total).
pub fn order(contingent: &SupportContingent) -> OrderKey {
    let inactive = i64::from(!contingent.is_active);
    OrderKey::new().int(inactive).text(contingent.from_date.to_string()).text(&contingent.title).id(contingent.id)
}

/// List a project's support contingents
///
/// The project's support contingents (retainer plans) with their balances on today's date
/// (the business clock: `LT_CUSTOM_NOW` in imposter mode): the current period, the hours the
/// issued invoices consumed in it, the hours carried over from earlier periods (transferable
/// contingents), the unbilled hours booked on the project's tasks in it, and what remains.
/// Active contingents first, then by fromDate. Needs access to the project.
#[utoipa::path(get, path = "/projects/{projectId}/support-contingents", operation_id = "listSupportContingents",
    tag = "billing", params(ProjectPath, PageParams),
    responses((status = 200, description = "The project's support contingents, active first", body = [SupportContingent])))]
pub async fn list_support_contingents(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<ProjectPath>,
    paging: Paging,
) -> ApiResult<Paged<SupportContingent>> {
    caller.authorize(Requirement::Member)?;
    let store = state.store();
    let record = project::accessible(store, caller.viewer(), path.project_id).await?;
    let scope = (caller.keys(), record.project.id);
    let (contingents, world) = tokio::join!(
        billing::support_contingents(store, scope),
        crate::world::invoices_and_unbilled_time(store, scope)
    );
    let (contingents, (invoices, unbilled)) = (contingents?, world?);
    let time: Vec<(Date, Decimal)> =
        unbilled.iter().filter(|e| e.quotation.is_none()).map(|e| (e.entry.date, e.entry.hours)).collect();
    let today = crate::business_today(&caller);
    let all = contingents.iter().map(|c| balance(c, today, &invoices, &time));
    paging.window(all, order)?.answer()
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::date;

    fn contingent(frequency: u32, hours: i64, transferable: bool, to: Option<Date>) -> SupportContingentRecord {
        SupportContingentRecord {
            id: Uuid::from_u128(7),
            project_id: Uuid::nil(),
            title: "Retainer".into(),
            from_date: date!(2026 - 01 - 15),
            to_date: to,
            frequency,
            hours: Decimal::from(hours),
            transferable,
            created_at: String::new(),
            updated_at: String::new(),
        }
    }

    fn invoice(to: Date, hours: Decimal) -> IssuedInvoiceRecord {
        IssuedInvoiceRecord {
            id: Uuid::new_v4(),
            project_id: Uuid::nil(),
            number: "RE-1".into(),
            date_from: to,
            date_to: to,
            consumed: vec![
                ContingentConsumption { contingent_id: Uuid::from_u128(7), hours, date: None },
                ContingentConsumption { contingent_id: Uuid::from_u128(8), hours: Decimal::from(100), date: None },
            ],
            task_ids: vec![],
            line_ids: vec![],
            issue: None,
            cancelled_by: None,
        }
    }

    /// By hand: monthly 10 h from 15 January. Periods 15 Jan–14 Feb (consumed 4), 15 Feb–14 Mar
    /// (consumed 12.5), 15 Mar–14 Apr (today 2 April; consumed 3). Carry into period 1:
    /// max(0, 10 + 0 − 4) = 6; into period 2: max(0, 10 + 6 − 12.5) = 3.5. Unbilled time in
    /// period 2 up to today: 1.5 + 0.75 = 2.25 (the 10 h after today and the hours before the
    /// period do not count). available = (10 − 3) + 3.5 − 2.25 = 8.25.
    #[test]
    fn a_transferable_monthly_contingent_matches_the_hand_calculation() {
        let invoices = [
            invoice(date!(2026 - 02 - 14), Decimal::from(4)),
            invoice(date!(2026 - 02 - 15), Decimal::new(125, 1)),
            invoice(date!(2026 - 04 - 01), Decimal::from(3)),
        ];
        let time = [
            (date!(2026 - 03 - 14), Decimal::from(5)),
            (date!(2026 - 03 - 15), Decimal::new(15, 1)),
            (date!(2026 - 04 - 02), Decimal::new(75, 2)),
            (date!(2026 - 04 - 03), Decimal::from(10)),
        ];
        let b = balance(&contingent(1, 10, true, None), date!(2026 - 04 - 02), &invoices, &time);
        assert!(b.is_active);
        assert_eq!(
            (b.current_period_start, b.current_period_end),
            (Some(date!(2026 - 03 - 15)), Some(date!(2026 - 04 - 14)))
        );
        assert_eq!(b.current_period_has_no_end_date, Some(false));
        assert_eq!(b.consumed_hours, Decimal::from(3));
        assert_eq!(b.available_by_contract, Decimal::from(7));
        assert_eq!(b.transferable_from_previous, Decimal::new(35, 1));
        assert_eq!(b.potentially_used_by_tasks, Decimal::new(225, 2));
        assert_eq!(b.available_hours, Decimal::new(825, 2));
        // The same contingent, not transferable: nothing carries over.
        let b = balance(&contingent(1, 10, false, None), date!(2026 - 04 - 02), &invoices, &time);
        assert_eq!((b.transferable_from_previous, b.available_hours), (Decimal::ZERO, Decimal::new(475, 2)));
    }

    #[test]
    fn overdrawn_periods_carry_nothing_and_inactive_contingents_have_no_period() {
        let invoices = [invoice(date!(2026 - 02 - 01), Decimal::from(25))];
        let b = balance(&contingent(1, 10, true, None), date!(2026 - 02 - 20), &invoices, &[]);
        assert_eq!((b.transferable_from_previous, b.available_hours), (Decimal::ZERO, Decimal::from(10)));
        let b = balance(&contingent(1, 10, true, None), date!(2026 - 02 - 10), &invoices, &[]);
        assert_eq!(b.available_by_contract, Decimal::from(-15), "overdrawn");
        let ended = contingent(3, 10, true, Some(date!(2026 - 06 - 30)));
        let b = balance(&ended, date!(2026 - 07 - 01), &invoices, &[]);
        assert!(!b.is_active);
        assert_eq!(
            (b.current_period_start, b.current_period_has_no_end_date, b.available_hours),
            (None, None, Decimal::ZERO)
        );
        let b = balance(&ended, date!(2026 - 01 - 14), &invoices, &[]);
        assert!(!b.is_active, "not started");
        // Quarterly, cut at toDate: the last period ends on it.
        let b = balance(&ended, date!(2026 - 06 - 30), &invoices, &[]);
        assert_eq!(
            (b.current_period_start, b.current_period_end),
            (Some(date!(2026 - 04 - 15)), Some(date!(2026 - 06 - 30)))
        );
    }

    #[test]
    fn an_open_period_ends_today_for_display() {
        let open = contingent(0, 40, true, None);
        let invoices =
            [invoice(date!(2026 - 03 - 01), Decimal::from(15)), invoice(date!(2027 - 01 - 01), Decimal::from(5))];
        let b = balance(&open, date!(2027 - 02 - 01), &invoices, &[(date!(2026 - 12 - 01), Decimal::ONE)]);
        assert_eq!(b.current_period_end, Some(date!(2027 - 02 - 01)));
        assert_eq!(b.current_period_has_no_end_date, Some(true));
        assert_eq!((b.consumed_hours, b.available_hours), (Decimal::from(20), Decimal::from(19)));
    }

    /// carry(k) walked period by period, as docs/billing.md defines it.
    fn carried_by_walking(c: &SupportContingentRecord, k: u32, invoices: &[IssuedInvoiceRecord]) -> Decimal {
        let mut carry = Decimal::ZERO;
        for j in 0..k {
            let period = periods::anchored_period(c.from_date, c.frequency, c.to_date, j).unwrap();
            carry = (c.hours + carry - consumed_in(c, invoices, period, false)).max(Decimal::ZERO);
        }
        carry
    }

    proptest::proptest! {
        #[test]
        fn the_carry_from_the_invoices_is_the_carry_walked_period_by_period(
            f in 1u32..=12, hours in -5i64..20, k in 0u32..40,
            drawn in proptest::collection::vec((0i64..1_300, 0i64..40), 0..12)) {
            let mut c = contingent(f, hours, true, None);
            c.hours = Decimal::from(hours);
            let invoices: Vec<_> =
                drawn.iter().map(|(day, h)| invoice(c.from_date + time::Duration::days(*day), Decimal::from(*h))).collect();
            proptest::prop_assert_eq!(carried_into(&c, k, &invoices), carried_by_walking(&c, k, &invoices));
        }
    }

    /// Issue 31: a monthly contingent from the first day of the calendar's range, read on its
    /// last day (13,199 earlier periods), with hours drawn early, late and in between.
    #[test]
    fn a_contingent_spanning_the_whole_calendar_range_has_its_balance() {
        use workapi_wire::calendar::{FIRST_DAY, LAST_DAY};
        let mut c = contingent(1, 10, true, None);
        c.from_date = FIRST_DAY;
        let invoices = [
            invoice(date!(1900 - 01 - 20), Decimal::from(4)),
            invoice(date!(2026 - 03 - 01), Decimal::from(131_900)),
            invoice(date!(2999 - 11 - 30), Decimal::from(12)),
            invoice(LAST_DAY, Decimal::from(1)),
        ];
        let b = balance(&c, LAST_DAY, &invoices, &[]);
        assert_eq!((b.current_period_start, b.current_period_end), (Some(date!(2999 - 12 - 01)), Some(LAST_DAY)));
        assert_eq!(b.transferable_from_previous, carried_by_walking(&c, 13_199, &invoices));
        assert_eq!(b.consumed_hours, Decimal::ONE);
        // An open contingent from the first day, read on the first and the last.
        let mut open = contingent(0, 40, true, None);
        open.from_date = FIRST_DAY;
        assert_eq!(balance(&open, FIRST_DAY, &invoices, &[]).current_period_end, Some(FIRST_DAY));
        assert_eq!(balance(&open, LAST_DAY, &invoices, &[]).consumed_hours, Decimal::from(131_917));
    }

    #[test]
    fn active_contingents_come_first_then_by_from_date() {
        let today = date!(2026 - 05 - 01);
        let mut early = contingent(1, 1, false, Some(date!(2026 - 02 - 01)));
        early.id = Uuid::from_u128(1);
        let mut late = contingent(1, 1, false, None);
        late.from_date = date!(2026 - 03 - 01);
        late.id = Uuid::from_u128(2);
        let mut first = contingent(1, 1, false, None);
        first.id = Uuid::from_u128(3);
        let mut all: Vec<_> = [&early, &late, &first].iter().map(|c| balance(c, today, &[], &[])).collect();
        all.sort_by_cached_key(order);
        assert_eq!(all.iter().map(|c| c.id.as_u128()).collect::<Vec<_>>(), [3, 2, 1]);
    }
}
