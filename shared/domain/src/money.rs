//! Money and rates: exact decimals (rust_decimal) that stay numbers in JSON and in the store.
//!
//! Serialised through the shortest decimal representation of the nearest double, which gives
//! back exactly the digits of any value of at most 15 significant digits (all the input types
//! accept); read back from that text, so no binary fraction ever enters a sum.

use rust_decimal::Decimal;
use rust_decimal::prelude::ToPrimitive;
use serde::{Deserializer, Serializer, de};
use std::str::FromStr;

/// The largest amount every JSON client reads exactly: 15 significant digits with the cents.
/// A double keeps any decimal of at most 15 significant digits (its shortest form gives the
/// digits back), while above 2^46 (7 × 10^13) its spacing exceeds a cent; so 10^13 − 0.01, below
/// the 2^53 / 100 where cents stop fitting at all. The input bounds keep every amount the API
/// returns under it (docs/conventions.md, "Numbers"; tested at the bounds in `pricing`).
pub const MAX_EXACT_AMOUNT: Decimal = Decimal::from_parts(0xA4C6_7FFF, 0x3_8D7E, 0, false, 2);

pub fn serialize<S: Serializer>(value: &Decimal, serializer: S) -> Result<S::Ok, S::Error> {
    let value = value.normalize();
    if value.scale() == 0
        && let Some(whole) = value.to_i64()
    {
        return serializer.serialize_i64(whole);
    }
    match value.to_f64() {
        Some(number) => serializer.serialize_f64(number),
        None => Err(serde::ser::Error::custom("decimal out of range")),
    }
}

pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Decimal, D::Error> {
    deserializer.deserialize_any(DecimalVisitor)
}

struct DecimalVisitor;

impl de::Visitor<'_> for DecimalVisitor {
    type Value = Decimal;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a decimal number")
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Decimal, E> {
        Ok(Decimal::from(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Decimal, E> {
        Ok(Decimal::from(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Decimal, E> {
        // `Display` of a double is its shortest round-tripping decimal, without exponent.
        Decimal::from_str(&v.to_string()).map(|d| d.normalize()).map_err(E::custom)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Decimal, E> {
        Decimal::from_str(v).or_else(|_| Decimal::from_scientific(v)).map(|d| d.normalize()).map_err(E::custom)
    }
}

/// The same for optional amounts (`null` when absent).
pub mod option {
    use super::*;

    pub fn serialize<S: Serializer>(value: &Option<Decimal>, serializer: S) -> Result<S::Ok, S::Error> {
        match value {
            Some(value) => super::serialize(value, serializer),
            None => serializer.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Decimal>, D::Error> {
        struct OptionVisitor;
        impl<'de> de::Visitor<'de> for OptionVisitor {
            type Value = Option<Decimal>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a decimal number or null")
            }
            fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                super::deserialize(d).map(Some)
            }
        }
        deserializer.deserialize_option(OptionVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
    struct Price {
        #[serde(with = "super")]
        amount: Decimal,
        #[serde(with = "super::option", default)]
        extra: Option<Decimal>,
    }

    #[test]
    fn amounts_stay_exact_json_numbers() {
        for text in ["0", "19.99", "0.1", "1234567890123.45", "95", "0.07"] {
            let price = Price { amount: Decimal::from_str(text).unwrap(), extra: None };
            let json = serde_json::to_value(&price).unwrap();
            assert!(json["amount"].is_number(), "{json}");
            assert_eq!(json["amount"].to_string(), text);
            let back: Price = serde_json::from_value(json).unwrap();
            assert_eq!(back, price);
        }
        let sum: Decimal = (0..10).map(|_| serde_json::from_str::<Price>(r#"{"amount":0.1}"#).unwrap().amount).sum();
        assert_eq!(sum, Decimal::ONE);
        let with_extra: Price = serde_json::from_str(r#"{"amount":1,"extra":2.5}"#).unwrap();
        assert_eq!(with_extra.extra, Some(Decimal::new(25, 1)));
    }
}
