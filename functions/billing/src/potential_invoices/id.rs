//! The potential invoice's composite id `{type}::{projectId}::{dateFrom}::{dateTo}` (spec
//! §2.7): its parts, its text form and the pattern the reference documents.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use time::Date;
use uuid::Uuid;
use workapi_domain::billing::day;

/// What a potential invoice bills.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum InvoiceType {
    /// Due subscription billing rows and imported catalog products' charges
    Subscription,
    /// Unbilled time (or the accepted express quotation that replaces a task's time) and
    /// manual positions
    Time,
}

impl InvoiceType {
    pub(super) fn name(self) -> &'static str {
        match self {
            InvoiceType::Subscription => "subscription",
            InvoiceType::Time => "time",
        }
    }
}

/// The composite id `{type}::{projectId}::{dateFrom}::{dateTo}` (spec §2.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct InvoiceId {
    pub kind: InvoiceType,
    pub project_id: Uuid,
    pub from: Date,
    pub to: Date,
}

/// The id's pattern, as documented: what [`InvoiceId::from_str`] accepts (besides the
/// calendar check of the dates and their order). The dates are `workapi_wire::calendar`'s
/// (`DATE_PATTERN`, tested to agree).
pub const ID_PATTERN: &str = "^(subscription|time)::[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}::(19[0-9]{2}|2[0-9]{3})-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])::(19[0-9]{2}|2[0-9]{3})-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$";

impl FromStr for InvoiceId {
    type Err = &'static str;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        const INVALID: &str = "must be {type}::{projectId}::{dateFrom}::{dateTo} with type subscription or time, \
                               a project UUID and two dates (YYYY-MM-DD), dateFrom on or before dateTo";
        let parts: Vec<&str> = text.split("::").collect();
        let [kind, project, from, to] = parts[..] else {
            return Err(INVALID);
        };
        let kind = match kind {
            "subscription" => InvoiceType::Subscription,
            "time" => InvoiceType::Time,
            _ => return Err(INVALID),
        };
        if project.len() != 36 {
            return Err(INVALID);
        }
        let project_id = Uuid::parse_str(project).map_err(|_| INVALID)?;
        let (from, to) = (day::parse(from).ok_or(INVALID)?, day::parse(to).ok_or(INVALID)?);
        if to < from {
            return Err(INVALID);
        }
        Ok(InvoiceId { kind, project_id, from, to })
    }
}

impl fmt::Display for InvoiceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}::{}::{}::{}", self.kind.name(), self.project_id, day::text(self.from), day::text(self.to))
    }
}

impl<'de> Deserialize<'de> for InvoiceId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = InvoiceId;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a potential invoice id")
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<InvoiceId, E> {
                text.parse().map_err(E::custom)
            }
        }
        deserializer.deserialize_str(Visitor)
    }
}

impl utoipa::PartialSchema for InvoiceId {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, Type};
        ObjectBuilder::new().schema_type(Type::String).pattern(Some(ID_PATTERN)).into()
    }
}

impl utoipa::ToSchema for InvoiceId {}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::date;

    #[test]
    fn ids_round_trip_and_malformed_ones_are_refused() {
        let text = "time::5d8e4c1a-6b2f-4e7a-9c3d-1f2a3b4c5d6e::2026-03-01::2026-03-31";
        let id: InvoiceId = text.parse().unwrap();
        assert_eq!((id.kind, id.from, id.to), (InvoiceType::Time, date!(2026 - 03 - 01), date!(2026 - 03 - 31)));
        assert_eq!(id.to_string(), text);
        for bad in [
            "",
            "time",
            "invoice::5d8e4c1a-6b2f-4e7a-9c3d-1f2a3b4c5d6e::2026-03-01::2026-03-31",
            "time::5d8e4c1a6b2f4e7a9c3d1f2a3b4c5d6e::2026-03-01::2026-03-31",
            "time::5d8e4c1a-6b2f-4e7a-9c3d-1f2a3b4c5d6e::2026-02-30::2026-03-31",
            "time::5d8e4c1a-6b2f-4e7a-9c3d-1f2a3b4c5d6e::2026-04-01::2026-03-31",
            "time::5d8e4c1a-6b2f-4e7a-9c3d-1f2a3b4c5d6e::2026-03-01::2026-03-31::x",
            "time:5d8e4c1a-6b2f-4e7a-9c3d-1f2a3b4c5d6e:2026-03-01:2026-03-31",
            // Only the plain form in the calendar's range: no aliases of a valid id.
            "time::5d8e4c1a-6b2f-4e7a-9c3d-1f2a3b4c5d6e::+2026-03-01::2026-03-31",
            "time::5d8e4c1a-6b2f-4e7a-9c3d-1f2a3b4c5d6e::-0001-03-01::2026-03-31",
            "time::5d8e4c1a-6b2f-4e7a-9c3d-1f2a3b4c5d6e::0000-03-01::2026-03-31",
            "time::5d8e4c1a-6b2f-4e7a-9c3d-1f2a3b4c5d6e::2026-03-01::3000-03-31",
        ] {
            assert!(bad.parse::<InvoiceId>().is_err(), "{bad}");
        }
    }

    #[test]
    fn the_documented_id_pattern_carries_the_calendar_date_pattern() {
        let date = workapi_wire::calendar::DATE_PATTERN.trim_start_matches('^').trim_end_matches('$');
        assert!(ID_PATTERN.ends_with(&format!("::{date}::{date}$")), "{ID_PATTERN}");
    }
}
