//! The list's cursor: an opaque token naming the last notification of a page by its place in
//! the timeline (`createdAt`, then id). Both lists (all, unread only) sort the same way, so one
//! cursor shape serves both. Decoding accepts only what encoding produces, so a cursor can never
//! put anything but a canonical timestamp and a UUID into a key.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use uuid::Uuid;
use workapi_store::clock;

/// A place in a user's notification timeline.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Position {
    /// `clock::rfc3339` form: fixed width, so it sorts as text.
    pub created_at: String,
    pub id: Uuid,
}

impl Position {
    /// The sort-key suffix of the timeline and unread entries: `<createdAt>#<id>`.
    pub fn sort_key(&self) -> String {
        format!("{}#{}", self.created_at, self.id)
    }

    pub fn encode(&self) -> String {
        URL_SAFE_NO_PAD.encode(self.sort_key())
    }

    /// The position a cursor names, or None when it is not one this API produced.
    pub fn decode(cursor: &str) -> Option<Position> {
        let bytes = URL_SAFE_NO_PAD.decode(cursor.as_bytes()).ok()?;
        let text = String::from_utf8(bytes).ok()?;
        let (created_at, id) = text.rsplit_once('#')?;
        let created_at = canonical_timestamp(created_at)?;
        let id = Uuid::try_parse(id).ok()?;
        // Only the canonical spelling of the UUID (what encode writes) is accepted.
        (text == format!("{created_at}#{id}")).then_some(Position { created_at, id })
    }
}

/// The timestamp in the stored form (UTC, three fraction digits), or None when it is not
/// ISO 8601 / RFC 3339.
pub fn canonical_timestamp(text: &str) -> Option<String> {
    OffsetDateTime::parse(text, &Rfc3339).ok().map(clock::rfc3339)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn cursors_round_trip_and_refuse_anything_else() {
        let at = Position { created_at: "2026-11-20T09:30:00.000Z".into(), id: Uuid::nil() };
        assert_eq!(Position::decode(&at.encode()), Some(at.clone()));
        for bad in ["", "x", "not base64!", &URL_SAFE_NO_PAD.encode("2026-11-20T09:30:00.000Z")] {
            assert_eq!(Position::decode(bad), None, "{bad}");
        }
        // A non-canonical timestamp or a key separator smuggled in is refused.
        let loose = URL_SAFE_NO_PAD.encode(format!("2026-11-20T09:30:00Z#{}", Uuid::nil()));
        assert_eq!(Position::decode(&loose), None);
        let injected = URL_SAFE_NO_PAD.encode(format!("2026-11-20T09:30:00.000Z#X#{}", Uuid::nil()));
        assert_eq!(Position::decode(&injected), None);
    }

    #[test]
    fn timestamps_are_stored_in_one_sortable_form() {
        assert_eq!(canonical_timestamp("2026-11-20T10:30:00+01:00").as_deref(), Some("2026-11-20T09:30:00.000Z"));
        assert_eq!(canonical_timestamp("2026-11-20"), None);
    }

    proptest! {
        #[test]
        fn any_position_round_trips_and_sort_keys_order_like_positions(
            a in 0i64..4_000_000_000, b in 0i64..4_000_000_000, x: u128, y: u128,
        ) {
            let at = |secs: i64, id: u128| Position {
                created_at: clock::rfc3339(OffsetDateTime::from_unix_timestamp(secs).unwrap()),
                id: Uuid::from_u128(id),
            };
            let (p, q) = (at(a, x), at(b, y));
            prop_assert_eq!(Position::decode(&p.encode()), Some(p.clone()));
            prop_assert_eq!(p.sort_key().cmp(&q.sort_key()), p.cmp(&q));
        }
    }
}
