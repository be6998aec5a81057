//! Wall-clock time. This is the security clock (token expiry, TTLs): nothing a request sends
//! can move it.

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

pub fn now() -> OffsetDateTime {
    OffsetDateTime::now_utc()
}

pub fn now_epoch() -> i64 {
    now().unix_timestamp()
}

/// RFC 3339 / ISO 8601 with millisecond precision, UTC (`2026-11-22T10:00:00.123Z`).
pub fn rfc3339(at: OffsetDateTime) -> String {
    let at = at.replace_nanosecond(at.millisecond() as u32 * 1_000_000).unwrap_or(at);
    at.format(&Rfc3339).unwrap_or_default()
}

pub fn now_rfc3339() -> String {
    rfc3339(now())
}
