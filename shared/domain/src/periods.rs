//! Calendar maths of billing (docs/billing.md): pure functions on dates, no clock.
//!
//! - Subscription billings run from the first day of `fromDate`'s month to the last day of
//!   `toDate`'s month in steps of `frequency` months; the last period is shorter when the
//!   months do not divide evenly ([`billing_periods`]).
//! - Support contingents run in periods anchored at their `fromDate`: period k starts
//!   `k × frequency` months after it (a day past the month's end is clamped to it, always from
//!   the anchor, so 31 January + 2 months is 31 March, not 28 March), and ends the day before
//!   the next one starts, or on `toDate` ([`anchored_period`], [`period_containing`]).

use time::{Date, Month};

/// Most months a subscription billing may span (first to last month, inclusive): 10 years,
/// so a billing with all its rows is one item far below DynamoDB's 400 KB (docs/billing.md).
pub const MAX_BILLING_MONTHS: u32 = 120;

/// A closed range of days.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Period {
    pub start: Date,
    pub end: Date,
}

impl Period {
    pub fn contains(&self, day: Date) -> bool {
        self.start <= day && day <= self.end
    }
}

/// Months since year 0 (a month index that adds and subtracts).
fn month_index(date: Date) -> i64 {
    i64::from(date.year()) * 12 + i64::from(u8::from(date.month())) - 1
}

fn from_month_index(index: i64, day: u8) -> Date {
    let year = index.div_euclid(12) as i32;
    let month = Month::try_from((index.rem_euclid(12) + 1) as u8).unwrap_or(Month::January);
    let day = day.min(time::util::days_in_month(month, year));
    // Only a year beyond the calendar's range (±9999) fails: the end of time, never a panic.
    Date::from_calendar_date(year, month, day).unwrap_or(if index < 0 { Date::MIN } else { Date::MAX })
}

/// `date` plus `months`, the day clamped to the target month's last day (31 January + 1 month
/// is 28 or 29 February).
pub fn add_months(date: Date, months: u32) -> Date {
    from_month_index(month_index(date) + i64::from(months), date.day())
}

pub fn month_start(date: Date) -> Date {
    date.replace_day(1).expect("day 1 exists")
}

pub fn month_end(date: Date) -> Date {
    let last = time::util::days_in_month(date.month(), date.year());
    date.replace_day(last).expect("the month's last day exists")
}

/// The calendar months a range touches, first and last included (1 for a range of one day).
pub fn months_spanned(from: Date, to: Date) -> u32 {
    (month_index(to) - month_index(from) + 1).max(0) as u32
}

/// One period of a subscription billing: its days and how many whole months it covers
/// (`frequency`, or fewer for a shorter last period).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BillingPeriod {
    pub period: Period,
    pub months: u32,
}

/// The periods of a subscription billing: from the first day of `from`'s month to the last
/// day of `to`'s month, `frequency` months each; the last one ends with `to`'s month and is
/// shorter when the months do not divide by `frequency`. Empty when `to` is before `from` or
/// `frequency` is 0 (the body refuses both). One step per period: at most
/// [`MAX_BILLING_MONTHS`] for a billing the API accepts.
pub fn billing_periods(from: Date, to: Date, frequency: u32) -> Vec<BillingPeriod> {
    if to < from || frequency == 0 {
        return Vec::new();
    }
    let total = months_spanned(from, to);
    let first = month_start(from);
    let mut periods = Vec::new();
    let mut offset = 0;
    while offset < total {
        let months = frequency.min(total - offset);
        let start = add_months(first, offset);
        let end = month_end(add_months(first, offset + months - 1));
        periods.push(BillingPeriod { period: Period { start, end }, months });
        offset += months;
    }
    periods
}

/// Period `k` (from 0) of a contingent anchored at `anchor`: it starts `k × frequency` months
/// after the anchor and ends the day before period `k + 1` starts, or on `until` when that
/// comes first. None when it would start after `until`.
pub fn anchored_period(anchor: Date, frequency: u32, until: Option<Date>, k: u32) -> Option<Period> {
    let start = add_months(anchor, k * frequency);
    let natural_end = add_months(anchor, (k + 1) * frequency).previous_day().unwrap_or(Date::MIN);
    let end = match until {
        Some(until) if until < start => return None,
        Some(until) => natural_end.min(until),
        None => natural_end,
    };
    Some(Period { start, end })
}

/// The anchored period (its index and days) holding `day`: None before the anchor or after
/// `until`. `frequency` ≥ 1. Constant time, whatever the dates (no loop).
pub fn period_containing(anchor: Date, frequency: u32, until: Option<Date>, day: Date) -> Option<(u32, Period)> {
    if day < anchor || until.is_some_and(|u| day > u) || frequency == 0 {
        return None;
    }
    // Closed form, no search: period k = months ÷ frequency starts in `day`'s month or before
    // it, and period k + 1 starts in a later month, so `day` is before period k + 1. Only when
    // period k starts in `day`'s own month, on a later day (the anchor's day has not come round
    // yet), is `day` in period k − 1, which starts at least a month earlier.
    let months = u32::try_from(month_index(day) - month_index(anchor)).ok()?;
    let k = months / frequency;
    let k = if day < add_months(anchor, k * frequency) { k.checked_sub(1)? } else { k };
    anchored_period(anchor, frequency, until, k).map(|p| (k, p))
}

/// The calendar month holding `day`.
pub fn month_of(day: Date) -> Period {
    Period { start: month_start(day), end: month_end(day) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use time::Duration;
    use time::macros::date;

    fn spans(periods: &[BillingPeriod]) -> Vec<(Date, Date, u32)> {
        periods.iter().map(|p| (p.period.start, p.period.end, p.months)).collect()
    }

    #[test]
    fn adding_months_clamps_to_the_month_end() {
        let table = [
            (date!(2026 - 01 - 31), 1, date!(2026 - 02 - 28)),
            (date!(2028 - 01 - 31), 1, date!(2028 - 02 - 29)), // leap year
            (date!(2026 - 01 - 31), 2, date!(2026 - 03 - 31)), // from the anchor, not stepwise
            (date!(2026 - 03 - 31), 1, date!(2026 - 04 - 30)),
            (date!(2026 - 11 - 15), 3, date!(2027 - 02 - 15)),
            (date!(2028 - 02 - 29), 12, date!(2029 - 02 - 28)),
            (date!(2026 - 12 - 31), 0, date!(2026 - 12 - 31)),
            (date!(2026 - 12 - 01), 1, date!(2027 - 01 - 01)),
            (date!(9999 - 12 - 15), 1, Date::MAX), // beyond the calendar: its end, no panic
        ];
        for (from, months, expected) in table {
            assert_eq!(add_months(from, months), expected, "{from} + {months}");
        }
    }

    #[test]
    fn billing_periods_table() {
        // Monthly over a quarter, from mid-month dates: whole months.
        assert_eq!(
            spans(&billing_periods(date!(2026 - 01 - 15), date!(2026 - 03 - 02), 1)),
            [
                (date!(2026 - 01 - 01), date!(2026 - 01 - 31), 1),
                (date!(2026 - 02 - 01), date!(2026 - 02 - 28), 1),
                (date!(2026 - 03 - 01), date!(2026 - 03 - 31), 1),
            ]
        );
        // Leap February.
        assert_eq!(
            spans(&billing_periods(date!(2028 - 02 - 10), date!(2028 - 02 - 10), 1)),
            [(date!(2028 - 02 - 01), date!(2028 - 02 - 29), 1)]
        );
        // A range of one day is its whole month, whatever the frequency.
        assert_eq!(
            spans(&billing_periods(date!(2026 - 05 - 31), date!(2026 - 05 - 31), 3)),
            [(date!(2026 - 05 - 01), date!(2026 - 05 - 31), 1)]
        );
        // Quarterly over seven months: the last period is one month.
        assert_eq!(
            spans(&billing_periods(date!(2026 - 01 - 01), date!(2026 - 07 - 31), 3)),
            [
                (date!(2026 - 01 - 01), date!(2026 - 03 - 31), 3),
                (date!(2026 - 04 - 01), date!(2026 - 06 - 30), 3),
                (date!(2026 - 07 - 01), date!(2026 - 07 - 31), 1),
            ]
        );
        // Yearly across years, starting mid-year.
        assert_eq!(
            spans(&billing_periods(date!(2026 - 07 - 20), date!(2028 - 06 - 01), 12)),
            [(date!(2026 - 07 - 01), date!(2027 - 06 - 30), 12), (date!(2027 - 07 - 01), date!(2028 - 06 - 30), 12)]
        );
        // Semi-annual across a year end.
        assert_eq!(
            spans(&billing_periods(date!(2026 - 10 - 01), date!(2027 - 03 - 31), 6)),
            [(date!(2026 - 10 - 01), date!(2027 - 03 - 31), 6)]
        );
        assert!(billing_periods(date!(2026 - 02 - 01), date!(2026 - 01 - 31), 1).is_empty());
        assert_eq!(months_spanned(date!(2026 - 01 - 31), date!(2035 - 12 - 01)), 120);
    }

    #[test]
    fn contingent_periods_table() {
        let anchor = date!(2026 - 01 - 31);
        // Monthly from 31 January: 31 Jan–27 Feb, 28 Feb–30 Mar, 31 Mar–29 Apr.
        let table = [
            (date!(2026 - 01 - 31), Some((0, date!(2026 - 01 - 31), date!(2026 - 02 - 27)))),
            (date!(2026 - 02 - 27), Some((0, date!(2026 - 01 - 31), date!(2026 - 02 - 27)))),
            (date!(2026 - 02 - 28), Some((1, date!(2026 - 02 - 28), date!(2026 - 03 - 30)))),
            (date!(2026 - 03 - 30), Some((1, date!(2026 - 02 - 28), date!(2026 - 03 - 30)))),
            (date!(2026 - 03 - 31), Some((2, date!(2026 - 03 - 31), date!(2026 - 04 - 29)))),
            (date!(2026 - 01 - 30), None),
        ];
        for (day, expected) in table {
            let found = period_containing(anchor, 1, None, day).map(|(k, p)| (k, p.start, p.end));
            assert_eq!(found, expected, "{day}");
        }
        // Quarterly with an end: the last period is cut at toDate, nothing after it.
        let until = Some(date!(2026 - 08 - 15));
        let q = |day| period_containing(date!(2026 - 01 - 01), 3, until, day).map(|(k, p)| (k, p.start, p.end));
        assert_eq!(q(date!(2026 - 07 - 01)), Some((2, date!(2026 - 07 - 01), date!(2026 - 08 - 15))));
        assert_eq!(q(date!(2026 - 08 - 16)), None);
        // Yearly from a leap day.
        let y = |day| period_containing(date!(2028 - 02 - 29), 12, None, day).map(|(k, p)| (k, p.start, p.end));
        assert_eq!(y(date!(2029 - 02 - 27)), Some((0, date!(2028 - 02 - 29), date!(2029 - 02 - 27))));
        assert_eq!(y(date!(2029 - 02 - 28)), Some((1, date!(2029 - 02 - 28), date!(2030 - 02 - 27))));
        assert_eq!(y(date!(2032 - 03 - 01)), Some((4, date!(2032 - 02 - 29), date!(2033 - 02 - 27))));
    }

    /// Issue 31: at the edges of the calendar's range (`workapi_wire::calendar`), every period a day
    /// falls in is found in one step, for every frequency, and the billing periods of a range
    /// ending on its last day end on it.
    #[test]
    fn periods_at_the_edges_of_the_calendar_range() {
        use workapi_wire::calendar::{FIRST_DAY, LAST_DAY};
        for f in 1..=12 {
            for (anchor, day) in [(FIRST_DAY, LAST_DAY), (FIRST_DAY, FIRST_DAY), (LAST_DAY, LAST_DAY)] {
                let (k, period) = period_containing(anchor, f, None, day).unwrap();
                assert!(period.contains(day), "{anchor} {f} {day}: {period:?}");
                assert_eq!(period.start, add_months(anchor, k * f));
            }
            // 1,199 years and 12 months from the first day: the last period starts in the last
            // months of the range and ends after it, inside the calendar type.
            let (k, period) = period_containing(FIRST_DAY, f, None, LAST_DAY).unwrap();
            assert_eq!(k, (months_spanned(FIRST_DAY, LAST_DAY) - 1) / f);
            assert!(period.end < Date::MAX, "no step saturates");
            let cut = period_containing(FIRST_DAY, f, Some(LAST_DAY), LAST_DAY).unwrap().1;
            assert_eq!(cut.end, LAST_DAY);
            let rows = billing_periods(date!(2990 - 01 - 01), LAST_DAY, f);
            assert_eq!(rows.last().unwrap().period.end, LAST_DAY);
            assert_eq!(rows.iter().map(|p| p.months).sum::<u32>(), 120);
        }
        assert_eq!(months_spanned(FIRST_DAY, LAST_DAY), 13_200);
        assert_eq!(period_containing(FIRST_DAY, 1, None, FIRST_DAY.previous_day().unwrap()), None);
    }

    /// Any day of the calendar's range.
    fn range_date() -> impl Strategy<Value = Date> {
        use workapi_wire::calendar::{FIRST_DAY, LAST_DAY};
        (0..=(LAST_DAY - FIRST_DAY).whole_days()).prop_map(|d| FIRST_DAY + Duration::days(d))
    }

    fn any_date() -> impl Strategy<Value = Date> {
        // 1990 to about 2090.
        (0i64..36_500).prop_map(|d| date!(1990 - 01 - 01) + Duration::days(d))
    }

    proptest! {
        #[test]
        fn the_period_of_any_day_of_the_range_starts_on_or_before_it_and_the_next_after_it(
            a in range_date(), b in range_date(), f in 1u32..=12) {
            let (anchor, day) = (a.min(b), a.max(b));
            let (k, period) = period_containing(anchor, f, None, day).unwrap();
            prop_assert_eq!(period.start, add_months(anchor, k * f));
            prop_assert!(period.start <= day && day < add_months(anchor, (k + 1) * f));
            prop_assert_eq!(Some(period), anchored_period(anchor, f, None, k));
        }

        #[test]
        fn billing_periods_tile_the_months_of_the_range(from in any_date(), len in 0i64..4_000, f in 1u32..=12) {
            let to = from + Duration::days(len);
            let periods = billing_periods(from, to, f);
            prop_assert_eq!(periods.first().unwrap().period.start, month_start(from));
            prop_assert_eq!(periods.last().unwrap().period.end, month_end(to));
            for pair in periods.windows(2) {
                prop_assert_eq!(pair[0].period.end + Duration::days(1), pair[1].period.start, "no gap, no overlap");
                prop_assert_eq!(pair[0].months, f, "only the last period may be shorter");
            }
            for p in &periods {
                prop_assert!(p.months >= 1 && p.months <= f);
                prop_assert_eq!(months_spanned(p.period.start, p.period.end), p.months);
            }
            prop_assert_eq!(periods.iter().map(|p| p.months).sum::<u32>(), months_spanned(from, to));
        }

        #[test]
        fn every_day_of_a_billing_lies_in_exactly_one_period(from in any_date(), len in 0i64..1_500, f in 1u32..=12,
                                                              probe in 0i64..1_600) {
            let to = from + Duration::days(len);
            let day = month_start(from) + Duration::days(probe);
            let periods = billing_periods(from, to, f);
            let holding = periods.iter().filter(|p| p.period.contains(day)).count();
            prop_assert_eq!(holding, usize::from(day <= month_end(to)));
        }

        #[test]
        fn anchored_periods_tile_from_the_anchor(anchor in any_date(), f in 1u32..=12, ends in proptest::option::of(0i64..3_000),
                                                 probe in 0i64..3_000) {
            let until = ends.map(|d| anchor + Duration::days(d));
            let day = anchor + Duration::days(probe);
            let found = period_containing(anchor, f, until, day);
            prop_assert_eq!(found.is_some(), until.is_none_or(|u| day <= u));
            if let Some((k, period)) = found {
                prop_assert!(period.contains(day));
                prop_assert_eq!(Some(period), anchored_period(anchor, f, until, k));
                // Consecutive periods meet without gap or overlap.
                if let Some(next) = anchored_period(anchor, f, until, k + 1) {
                    prop_assert_eq!(period.end + Duration::days(1), next.start);
                }
                if k > 0 {
                    let previous = anchored_period(anchor, f, until, k - 1).unwrap();
                    prop_assert_eq!(previous.end + Duration::days(1), period.start);
                }
            }
        }
    }
}
