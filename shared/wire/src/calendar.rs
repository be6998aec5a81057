//! The one reader of dates and instants (docs/conventions.md, "Dates"): request bodies, the
//! business clock (`LT_CUSTOM_NOW`), potential-invoice ids and stored records all read a date
//! here, so what one place accepts every place accepts.
//!
//! A date is `YYYY-MM-DD`, ISO 8601's plain form: exactly ten characters, a four-digit year
//! without sign, a real calendar day, in [`FIRST_DAY`]..=[`LAST_DAY`]. The range is a product
//! decision: it holds every date a business record means, and it keeps the calendar maths of
//! billing (`workapi_domain::periods`) small and exact: a day plus a period of up to
//! 12 months never leaves the calendar type's ±9999 years (so no step saturates), and the most
//! periods any computation walks is one per month of the range, 13,200.

use time::format_description::well_known::Rfc3339;
use time::macros::date;
use time::{Date, Month, OffsetDateTime, UtcOffset};

/// The first year a date may have.
pub const FIRST_YEAR: i32 = 1900;
/// The last year a date may have.
pub const LAST_YEAR: i32 = 2999;
/// The first day the API accepts.
pub const FIRST_DAY: Date = date!(1900 - 01 - 01);
/// The last day the API accepts.
pub const LAST_DAY: Date = date!(2999 - 12 - 31);

/// What [`parse_date`] accepts, as a JSON Schema pattern: the four-digit year in range (the
/// calendar check of month and day is beyond a pattern).
pub const DATE_PATTERN: &str = "^(19[0-9]{2}|2[0-9]{3})-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$";

/// How the messages name the accepted dates.
pub const DATE_RANGE_TEXT: &str = "a date (YYYY-MM-DD) from 1900-01-01 to 2999-12-31";

/// How the messages name the accepted instants.
pub const INSTANT_RANGE_TEXT: &str =
    "an ISO 8601 date-time (RFC 3339, e.g. 2026-01-31T09:00:00Z) or date, from 1900-01-01 to 2999-12-31";

/// Whether a date is within the accepted range.
pub fn in_range(date: Date) -> bool {
    (FIRST_DAY..=LAST_DAY).contains(&date)
}

/// `YYYY-MM-DD` in range, else None (`+2026-01-01`, `0000-01-01`, `2026-1-1`, `2026-02-30`,
/// `3000-01-01`).
pub fn parse_date(text: &str) -> Option<Date> {
    let bytes = text.as_bytes();
    let shape = bytes.len() == 10
        && bytes[4] == b'-'
        && bytes[7] == b'-'
        && bytes.iter().enumerate().all(|(i, b)| i == 4 || i == 7 || b.is_ascii_digit());
    if !shape {
        return None;
    }
    let year: i32 = text[0..4].parse().ok()?;
    let month = Month::try_from(text[5..7].parse::<u8>().ok()?).ok()?;
    let day: u8 = text[8..10].parse().ok()?;
    Date::from_calendar_date(year, month, day).ok().filter(|d| in_range(*d))
}

/// An instant: an RFC 3339 date-time (its offset kept), or a date meaning its midnight UTC.
/// Both its date as written and its UTC date are in range, so whichever a caller takes is one
/// the calendar maths accepts.
pub fn parse_instant(text: &str) -> Option<OffsetDateTime> {
    if let Some(day) = parse_date(text) {
        return Some(day.midnight().assume_utc());
    }
    // RFC 3339's date is the plain form already (four digits, no sign); only the range remains.
    let at = OffsetDateTime::parse(text, &Rfc3339).ok()?;
    (in_range(at.date()) && in_range(at.to_offset(UtcOffset::UTC).date())).then_some(at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn dates_are_the_plain_form_within_the_range() {
        let table = [
            ("2026-01-31", Some(date!(2026 - 01 - 31))),
            ("1900-01-01", Some(FIRST_DAY)),
            ("2999-12-31", Some(LAST_DAY)),
            ("2028-02-29", Some(date!(2028 - 02 - 29))),
            ("1899-12-31", None),
            ("3000-01-01", None),
            ("9999-12-31", None),
            ("0000-01-01", None),
            ("+2026-01-01", None),
            ("-0001-01-01", None),
            ("+002026-01-01", None),
            ("2026-1-31", None),
            ("2026-01-31 ", None),
            ("2026-02-29", None),
            ("2026-13-01", None),
            ("2026-00-10", None),
            ("2026-01-00", None),
            ("2026-01-31T00:00:00Z", None),
            ("２０２６-01-31", None),
            ("", None),
        ];
        for (text, expected) in table {
            assert_eq!(parse_date(text), expected, "{text:?}");
        }
    }

    #[test]
    fn instants_are_rfc_3339_or_a_date_within_the_range() {
        assert_eq!(parse_instant("2026-01-31T09:00:00Z").unwrap().unix_timestamp(), 1_769_850_000);
        assert_eq!(parse_instant("2026-01-31T10:00:00+01:00").unwrap().unix_timestamp(), 1_769_850_000);
        assert_eq!(parse_instant("2026-01-31").unwrap().unix_timestamp(), 1_769_817_600);
        assert!(parse_instant("2999-12-31T23:59:59Z").is_some());
        assert!(parse_instant("1900-01-01T00:00:00Z").is_some());
        for bad in [
            "",
            "yesterday",
            "2026-13-01",
            "2026-01-31T09:00:00",
            "1769850000",
            "9999-12-31",
            "9999-12-31T00:00:00Z",
            "0000-01-01T00:00:00Z",
            "+2026-01-31",
            "-0001-01-01",
            // In range as written, past the end in UTC (and the reverse).
            "2999-12-31T23:00:00-05:00",
            "1900-01-01T01:00:00+05:00",
        ] {
            assert!(parse_instant(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn the_documented_pattern_admits_the_range_years_in_the_plain_form() {
        let pattern = regex_lite::Regex::new(DATE_PATTERN).unwrap();
        for (text, matches) in [
            ("1900-01-01", true),
            ("2999-12-31", true),
            ("2026-02-28", true),
            ("1899-12-31", false),
            ("3000-01-01", false),
            ("0000-01-01", false),
            ("+2026-01-01", false),
            ("2026-13-01", false),
            ("2026-01-32", false),
        ] {
            assert_eq!(pattern.is_match(text), matches, "{text}");
            if parse_date(text).is_some() {
                assert!(matches, "{text}: what parses, the pattern admits");
            }
        }
    }

    proptest! {
        #[test]
        fn every_day_of_the_range_reads_back_as_written(offset in 0i64..=(LAST_DAY - FIRST_DAY).whole_days()) {
            let day = FIRST_DAY + time::Duration::days(offset);
            let text = format!("{:04}-{:02}-{:02}", day.year(), u8::from(day.month()), day.day());
            prop_assert_eq!(parse_date(&text), Some(day));
            prop_assert_eq!(parse_instant(&text).map(|t| t.date()), Some(day));
        }

        #[test]
        fn any_text_that_parses_is_the_plain_form_in_range(text in "[-+0-9T:Z]{0,12}") {
            if let Some(day) = parse_date(&text) {
                prop_assert!(in_range(day));
                prop_assert_eq!(text.len(), 10);
                prop_assert!(text.as_bytes()[0].is_ascii_digit());
            }
        }
    }
}
