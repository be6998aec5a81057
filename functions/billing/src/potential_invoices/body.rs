//! The request bodies of the potential-invoice changes (spec §4.8).

use time::Date;
use uuid::Uuid;
use workapi_kit::input::{At, Errors, Field, Input, Integer, Patch, SchemaRef};
use workapi_wire::calendar;

/// Largest custom quantity of a row.
pub const MAX_CUSTOM_QUANTITY: i64 = 1_000_000;

/// A date, or an ISO 8601 timestamp whose calendar date (in its own offset) is taken; both in
/// the accepted range (`workapi_wire::calendar`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DateOrTimestamp(pub Date);

impl Field for DateOrTimestamp {
    fn read(value: &serde_json::Value, at: &At, errors: &mut Errors) -> Option<Self> {
        // A date alone is its midnight UTC, whose date is the date as written.
        let parsed = value.as_str().and_then(calendar::parse_instant).map(|t| DateOrTimestamp(t.date()));
        if parsed.is_none() {
            errors.add(at, format!("{} must be {}", at.name(), calendar::INSTANT_RANGE_TEXT));
        }
        parsed
    }

    fn schema() -> SchemaRef {
        use utoipa::openapi::schema::{ObjectBuilder, Type};
        ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some("A date (YYYY-MM-DD) or an ISO 8601 date-time, from 1900-01-01 to 2999-12-31"))
            .into()
    }
}

/// A partial update of a potential invoice (spec §4.8).
#[derive(Input)]
#[input(rules = patch_rules)]
#[input(example = serde_json::json!({"billedFrom": "2026-03-01", "billedTo": "2026-03-31T23:59:59Z",
    "contactId": "feba6268-1a6d-44ce-bd62-936a18e5d37a"}))]
pub struct PotentialInvoicePatchBody {
    /// Start of the billed range; null restores dateFrom
    pub billed_from: Patch<DateOrTimestamp>,
    /// End of the billed range, on or after billedFrom; null restores dateTo
    pub billed_to: Patch<DateOrTimestamp>,
    /// An active contact of the project's customer organization; null clears the recipient
    pub contact_id: Patch<Uuid>,
}

/// Both ends of the billed range given: billedTo on or after billedFrom (an end given alone is
/// checked against the stored one when written).
fn patch_rules(body: &PotentialInvoicePatchBodyFields, _at: &At, errors: &mut Errors) {
    if let (Some(Patch::Value(from)), Some(Patch::Value(to))) = (&body.billed_from, &body.billed_to)
        && to.0 < from.0
    {
        errors.fail("billedTo", "billedTo must be on or after billedFrom");
    }
}

/// A row's custom quantity (spec §4.8).
#[derive(Input)]
#[input(example = serde_json::json!({"value": 3}))]
pub struct QuantityBody {
    /// A non-negative integer; null or absent restores the row's own quantity
    pub value: Patch<Integer<0, MAX_CUSTOM_QUANTITY>>,
}
