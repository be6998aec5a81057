//! Wall-clock time. This is the security clock (token expiry, TTLs): nothing a request sends
//! can move it.

use time::macros::format_description;
use time::{OffsetDateTime, UtcOffset};

pub fn now() -> OffsetDateTime {
    OffsetDateTime::now_utc()
}

pub fn now_epoch() -> i64 {
    now().unix_timestamp()
}

/// RFC 3339 / ISO 8601 in UTC, always with three fraction digits (`2026-11-22T10:00:00.000Z`),
/// so that timestamps sort correctly as text.
pub fn rfc3339(at: OffsetDateTime) -> String {
    let format = format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");
    at.to_offset(UtcOffset::UTC).format(&format).unwrap_or_default()
}

pub fn now_rfc3339() -> String {
    rfc3339(now())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_have_fixed_width_and_sort_as_text() {
        let whole = OffsetDateTime::from_unix_timestamp(1_769_850_000).unwrap();
        let later = whole + time::Duration::milliseconds(5);
        assert_eq!(rfc3339(whole), "2026-01-31T09:00:00.000Z");
        assert_eq!(rfc3339(later), "2026-01-31T09:00:00.005Z");
        assert!(rfc3339(whole) < rfc3339(later));
        let offset = whole.to_offset(UtcOffset::from_hms(2, 0, 0).unwrap());
        assert_eq!(rfc3339(offset), "2026-01-31T09:00:00.000Z", "always UTC");
    }
}
