//! Invoice lines of a project's manual positions and imported catalog products (spec §2.4,
//! §4.4, §4.5; docs/billing.md, "Positions and products"): plain functions of the records and
//! the day, no store, no clock.
//!
//! - A manual position is one line, once: its price less its discount (fixed, capped at the
//!   price, or a percentage of it, rounded once), due from the day it was created.
//! - An imported product gives a one-time line (its one-time price and the chosen options'
//!   one-time extras) on the day it becomes active, and, when it has recurring prices, one
//!   line per period and kind (`subscription`: the subscription price; `perUnit`: the price per
//!   unit × the import's quantity), billed in advance: due on the period's first day. Periods
//!   are `priceFrequency` months anchored at the day the product becomes active; a contract
//!   that `Stops` ends after `contractPeriodMonths` (its last period shorter and prorated by
//!   whole months), an `Automatic` one renews without end.
//!
//! Every line has a stable id (`position:<id>`, `product:<projectProductId>:oneTime`,
//! `product:<projectProductId>:<subscription|perUnit>:<periodStart>`): the same line has the
//! same id on every read, so an issued invoice that lists it (`lineIds`) keeps it from
//! appearing again.
//!
//! Amounts follow the one rounding rule of `pricing`: every product of a price is rounded once
//! to the currency's minor unit (half away from zero); sums are exact.

use crate::billing::day;
use crate::catalog::{ActiveFromType, OptionValue, PriceTarget, Prices, ProjectProductRecord, RenewalMode};
use crate::money;
use crate::periods::{self, Period};
use crate::position::{DiscountType, ManualPositionRecord};
use crate::pricing::{self, round_amount};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use time::Date;
use uuid::Uuid;

/// The id of a manual position's line: a position is billed once.
pub fn position_line_id(position_id: Uuid) -> String {
    format!("position:{position_id}")
}

/// The id of an imported product's line: the one-time charge once, a recurring charge once
/// per period (named by its first day).
pub fn product_line_id(project_product_id: Uuid, charge: ProductCharge, period_start: Option<Date>) -> String {
    match period_start {
        Some(start) => format!("product:{project_product_id}:{}:{}", charge.name(), day::text(start)),
        None => format!("product:{project_product_id}:{}", charge.name()),
    }
}

/// The id of a subscription billing row's line (its `billingId`): a row is billed once.
pub fn subscription_row_line_id(row_id: Uuid) -> String {
    format!("subscription:{row_id}")
}

/// Whether `text` is a line id of one of the forms above (UUIDs hyphenated, the period's day
/// `YYYY-MM-DD`).
pub fn is_line_id(text: &str) -> bool {
    let uuid = |id: &str| id.len() == 36 && Uuid::parse_str(id).is_ok();
    match text.split(':').collect::<Vec<_>>()[..] {
        ["position" | "subscription", id] => uuid(id),
        ["product", id, "oneTime"] => uuid(id),
        ["product", id, "subscription" | "perUnit", start] => uuid(id) && day::parse(start).is_some(),
        _ => false,
    }
}

/// The calendar date (UTC) of a stored RFC 3339 instant (`createdAt`), None when unreadable.
pub fn utc_date(instant: &str) -> Option<Date> {
    workapi_wire::calendar::parse_instant(instant).map(|at| at.to_offset(time::UtcOffset::UTC).date())
}

/// A manual position on a potential invoice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PositionLine {
    /// `position:<positionId>`: the same on every read; an issued invoice lists it
    pub line_id: String,
    pub position_id: Uuid,
    pub name: String,
    /// The position's order in the project (lower first)
    pub sort: i64,
    /// The position's net price
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub price: Decimal,
    pub discount_type: DiscountType,
    /// As set on the position: an amount (Fixed) or percent (Percentage); 0 means none
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub discount_amount: Decimal,
    /// The amount taken off: Fixed the discountAmount, at most the price; Percentage
    /// price × discountAmount ÷ 100, rounded to the minor unit
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub discount: Decimal,
    /// price − discount, never negative
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub amount: Decimal,
}

/// A manual position's line (see the module comment), in a currency of `minor_units`.
pub fn position_line(position: &ManualPositionRecord, minor_units: u32) -> PositionLine {
    let price = round_amount(position.price, minor_units);
    let discount = match position.discount_type {
        DiscountType::Fixed => round_amount(position.discount_amount, minor_units),
        DiscountType::Percentage => round_amount(price * position.discount_amount / Decimal::ONE_HUNDRED, minor_units),
    };
    // Capped at the price (a fixed discount may exceed it): a line never goes negative.
    let discount = discount.min(price).max(Decimal::ZERO);
    PositionLine {
        line_id: position_line_id(position.id),
        position_id: position.id,
        name: position.name.clone(),
        sort: position.sort,
        price,
        discount_type: position.discount_type,
        discount_amount: position.discount_amount.normalize(),
        discount: discount.normalize(),
        amount: (price - discount).normalize(),
    }
}

/// Which price of an imported product a line charges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum ProductCharge {
    /// The one-time price (`priceFixed`), once, when the product becomes active
    OneTime,
    /// The subscription price (`priceSubscription`) per period
    Subscription,
    /// The price per unit (`pricePerUnit`) × the import's quantity, per period
    PerUnit,
}

impl ProductCharge {
    pub const ALL: [ProductCharge; 3] = [ProductCharge::OneTime, ProductCharge::Subscription, ProductCharge::PerUnit];

    fn name(self) -> &'static str {
        match self {
            ProductCharge::OneTime => "oneTime",
            ProductCharge::Subscription => "subscription",
            ProductCharge::PerUnit => "perUnit",
        }
    }

    fn price(self, prices: &Prices) -> Option<Decimal> {
        match self {
            ProductCharge::OneTime => prices.price_fixed,
            ProductCharge::Subscription => prices.price_subscription,
            ProductCharge::PerUnit => prices.price_per_unit,
        }
    }

    fn extra_price(self, value: &OptionValue) -> Option<Decimal> {
        match self {
            ProductCharge::OneTime => value.extra_price_fixed,
            ProductCharge::Subscription => value.extra_price_subscription,
            ProductCharge::PerUnit => value.extra_price_per_unit,
        }
    }

    fn recurring(self) -> bool {
        self != ProductCharge::OneTime
    }
}

/// A chosen option value's extra price on a product line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExtraCharge {
    pub option_id: Uuid,
    pub value_id: Uuid,
    /// The option's and the value's names, e.g. `Region: Frankfurt`
    pub name: String,
    /// The value's extra price of the line's kind (its custom price when set)
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub unit_price: Decimal,
    /// unitPrice × the line's quantity × months ÷ priceFrequency, rounded to the minor unit
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub amount: Decimal,
}

/// An imported product's charge on a potential invoice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProductLine {
    /// `product:<projectProductId>:oneTime` or
    /// `product:<projectProductId>:<subscription|perUnit>:<periodStart>`: the same on every read
    pub line_id: String,
    /// The import (`GET /projects/{projectId}/products`)
    pub project_product_id: Uuid,
    /// The catalog product it was imported from
    pub product_id: Uuid,
    pub name: String,
    /// The import's active variant, whose prices replace the product's where it has them
    #[schema(required)]
    pub variant_id: Option<Uuid>,
    #[schema(required)]
    pub variant_name: Option<String>,
    pub charge: ProductCharge,
    /// The period charged (recurring charges); null for oneTime
    #[serde(with = "day::option")]
    #[schema(value_type = Option<String>, format = Date, required)]
    pub period_start: Option<Date>,
    #[serde(with = "day::option")]
    #[schema(value_type = Option<String>, format = Date, required)]
    pub period_end: Option<Date>,
    /// Whole months of the period: priceFrequency, fewer for the last period of a contract
    /// that stops; null for oneTime
    #[schema(required)]
    pub months: Option<u32>,
    /// Months per period; null for oneTime
    #[schema(required)]
    pub price_frequency: Option<u32>,
    /// The import's quantity for perUnit, else 1
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub quantity: Decimal,
    /// The product's priceUnitName (perUnit); null otherwise
    #[schema(required)]
    pub unit_name: Option<String>,
    /// The price of the line's kind: the variant's (custom, else catalog), else the product's
    /// (custom, else catalog)
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub unit_price: Decimal,
    /// unitPrice × quantity × months ÷ priceFrequency, rounded to the minor unit
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub base_amount: Decimal,
    /// The chosen option values with an extra price of this kind
    pub extras: Vec<ExtraCharge>,
    /// baseAmount + the extras' amounts
    #[serde(with = "money")]
    #[schema(value_type = f64)]
    pub amount: Decimal,
    /// The day the line became billable: the day the product became active (oneTime) or the
    /// period's first day (billed in advance)
    #[serde(with = "day")]
    #[schema(value_type = String, format = Date)]
    pub due_on: Date,
}

/// The day an imported product starts to count: the import's day (`Immediately`), its
/// `activeFromFixedDate` (`FixedDate`), or the start of the project's billing but not before
/// the import (`ProjectBilling`; None while the project bills nothing).
pub fn active_from(product: &ProjectProductRecord, project_billing_start: Option<Date>) -> Option<Date> {
    let imported = utc_date(&product.created_at)?;
    match product.import.active_from_type {
        ActiveFromType::Immediately => Some(imported),
        ActiveFromType::FixedDate => product.import.active_from_fixed_date.as_deref().and_then(day::parse),
        ActiveFromType::ProjectBilling => project_billing_start.map(|start| start.max(imported)),
    }
}

/// A recurring product's period: its days and its whole months.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProductPeriod {
    pub period: Period,
    pub months: u32,
}

/// The periods of a recurring product that start on or before `until`: `frequency` months each
/// (1 to 12), anchored at `active_from` (`periods::anchored_period`: a day past a month's end
/// clamps to it); with `contract_months`, they end after that many months, the last one
/// shorter when the contract does not divide by the frequency. One step per period.
pub fn product_periods(
    active_from: Date,
    frequency: u32,
    contract_months: Option<u32>,
    until: Date,
) -> Vec<ProductPeriod> {
    let frequency = frequency.clamp(1, 12);
    let contract_end =
        contract_months.map(|m| periods::add_months(active_from, m).previous_day().unwrap_or(active_from));
    let mut all = Vec::new();
    for k in 0u32.. {
        let Some(period) = periods::anchored_period(active_from, frequency, contract_end, k) else { break };
        if period.start > until || all.last().is_some_and(|p: &ProductPeriod| p.period.start >= period.start) {
            break;
        }
        let months = match contract_months {
            Some(total) => frequency.min(total.saturating_sub(k * frequency)).max(1),
            None => frequency,
        };
        all.push(ProductPeriod { period, months });
    }
    all
}

/// A price set on the import for a target and kind (`customPrices`): any amount, 0 included.
fn custom_price(product: &ProjectProductRecord, target: PriceTarget, charge: ProductCharge) -> Option<Decimal> {
    let key = target.key();
    product.import.custom_prices.iter().find(|c| c.key == key).and_then(|c| charge.price(&c.prices))
}

/// A catalog price: 0 means none (spec §2.8).
fn catalog_price(price: Option<Decimal>) -> Option<Decimal> {
    price.filter(|p| *p > Decimal::ZERO)
}

/// The import's price of a kind: the active variant's (its custom price, else its catalog
/// price), else the product's (custom, else catalog), else 0.
pub fn unit_price(product: &ProjectProductRecord, charge: ProductCharge) -> Decimal {
    let variant = product.import.active_variant_id.and_then(|id| product.product.variants.iter().find(|v| v.id == id));
    let from_variant = variant.and_then(|v| {
        custom_price(product, PriceTarget::Variant(v.id), charge).or_else(|| catalog_price(charge.price(&v.prices)))
    });
    from_variant
        .or_else(|| custom_price(product, PriceTarget::Base, charge))
        .or_else(|| catalog_price(charge.price(&product.product.prices)))
        .unwrap_or(Decimal::ZERO)
}

/// The chosen option values with an extra price of the kind (custom, else catalog), in the
/// import's order: (option id, value id, name, unit price).
fn extra_prices(product: &ProjectProductRecord, charge: ProductCharge) -> Vec<(Uuid, Uuid, String, Decimal)> {
    let mut extras = Vec::new();
    for choice in &product.import.options {
        let Some(option) = product.product.options.iter().find(|o| o.id == choice.id) else { continue };
        for value in choice.value.iter().filter_map(|id| option.values.iter().find(|v| v.id == *id)) {
            let price = custom_price(product, PriceTarget::OptionValue(value.id), charge)
                .or_else(|| catalog_price(charge.extra_price(value)))
                .unwrap_or(Decimal::ZERO);
            if price > Decimal::ZERO {
                extras.push((option.id, value.id, format!("{}: {}", option.name, value.name), price));
            }
        }
    }
    extras
}

/// The lines of an imported product due on or before `today`, from the day it became active
/// (`active_from`), in a currency of `minor_units`: the one-time line, then per period the
/// subscription and per-unit lines. A kind whose price and extras are all 0 has no line.
pub fn product_lines(
    product: &ProjectProductRecord,
    active_from: Date,
    today: Date,
    minor_units: u32,
) -> Vec<ProductLine> {
    let import = &product.import;
    let frequency = import.price_frequency.and_then(|f| u32::try_from(f).ok()).unwrap_or(1).clamp(1, 12);
    let contract = match import.renewal_mode {
        RenewalMode::Stops => Some(u32::try_from(import.contract_period_months).unwrap_or(1).max(1)),
        RenewalMode::Automatic => None,
    };
    let variant = import.active_variant_id.and_then(|id| product.product.variants.iter().find(|v| v.id == id));
    let mut lines = Vec::new();
    let mut periods: Option<Vec<ProductPeriod>> = None;
    for charge in ProductCharge::ALL {
        let unit = unit_price(product, charge);
        let extras = extra_prices(product, charge);
        if unit <= Decimal::ZERO && extras.is_empty() {
            continue;
        }
        let quantity = if charge == ProductCharge::PerUnit { import.quantity } else { Decimal::ONE };
        let line = |period: Option<ProductPeriod>| {
            let (months, of) = period.map_or((1, 1), |p| (p.months, frequency));
            let amount = |price: Decimal| round_amount(pricing::prorate(price * quantity, months, of), minor_units);
            let extras: Vec<ExtraCharge> = extras
                .iter()
                .map(|(option_id, value_id, name, price)| ExtraCharge {
                    option_id: *option_id,
                    value_id: *value_id,
                    name: name.clone(),
                    unit_price: price.normalize(),
                    amount: amount(*price),
                })
                .collect();
            let base_amount = amount(unit);
            let total = base_amount + extras.iter().map(|e| e.amount).sum::<Decimal>();
            let start = period.map(|p| p.period.start);
            ProductLine {
                line_id: product_line_id(product.id, charge, start),
                project_product_id: product.id,
                product_id: product.product.id,
                name: product.product.name.clone(),
                variant_id: variant.map(|v| v.id),
                variant_name: variant.map(|v| v.name.clone()),
                charge,
                period_start: start,
                period_end: period.map(|p| p.period.end),
                months: period.map(|p| p.months),
                price_frequency: period.map(|_| frequency),
                quantity: quantity.normalize(),
                unit_name: (charge == ProductCharge::PerUnit)
                    .then(|| product.product.price_unit_name.clone())
                    .flatten(),
                unit_price: unit.normalize(),
                base_amount,
                extras,
                amount: total.normalize(),
                due_on: start.unwrap_or(active_from),
            }
        };
        if !charge.recurring() {
            if active_from <= today {
                lines.push(line(None));
            }
            continue;
        }
        let periods = periods.get_or_insert_with(|| product_periods(active_from, frequency, contract, today));
        lines.extend(periods.iter().map(|p| line(Some(*p))));
    }
    lines
}

#[cfg(test)]
mod tests;
