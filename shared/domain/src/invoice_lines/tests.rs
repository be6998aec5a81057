//! The hand calculations of docs/billing.md ("Positions and products"), line by line, and the
//! properties every line keeps.

use super::*;
use crate::catalog::{
    ChosenOption, CustomPrice, Import, ProductDefinition, ProductOption, ProductRecord, VariantRecord,
};
use proptest::prelude::*;
use std::str::FromStr;
use time::macros::date;
use workapi_richtext::Doc;

fn d(text: &str) -> Decimal {
    Decimal::from_str(text).unwrap()
}

fn position(price: &str, discount_type: DiscountType, discount: &str) -> ManualPositionRecord {
    ManualPositionRecord {
        id: Uuid::from_u128(1),
        project_id: Uuid::nil(),
        name: "Domain".into(),
        description: Doc::empty(),
        price: d(price),
        category_id: None,
        discount_type,
        discount_amount: d(discount),
        sort: 1,
        created_at: "2026-11-27T10:00:00.000Z".into(),
        created_by: Uuid::nil(),
    }
}

/// By hand, to the minor unit (half away from zero):
#[test]
fn a_position_s_line_is_its_price_less_its_discount() {
    use DiscountType::{Fixed, Percentage};
    let cases = [
        // 250 − 30 = 220.
        ("250", Fixed, "30", 2, "30", "220"),
        // 199.99 × 12.5 % = 24.99875 → 25.00; 199.99 − 25 = 174.99.
        ("199.99", Percentage, "12.5", 2, "25", "174.99"),
        // A fixed discount above the price takes it to 0, never below.
        ("120", Fixed, "500", 2, "120", "0"),
        // No discount.
        ("80", Percentage, "0", 2, "0", "80"),
        // 100 % off.
        ("80", Percentage, "100", 2, "80", "0"),
        // 0.05 × 50 % = 0.025 → 0.03; 0.05 − 0.03 = 0.02.
        ("0.05", Percentage, "50", 2, "0.03", "0.02"),
        // Yen have no minor unit: 999 × 15 % = 149.85 → 150; 999 − 150 = 849.
        ("999", Percentage, "15", 0, "150", "849"),
    ];
    for (price, kind, amount, minor, discount, total) in cases {
        let line = position_line(&position(price, kind, amount), minor);
        assert_eq!((line.discount, line.amount), (d(discount), d(total)), "{price} {kind:?} {amount}");
        assert_eq!(line.line_id, format!("position:{}", Uuid::from_u128(1)));
    }
}

fn prices(fixed: Option<&str>, subscription: Option<&str>, per_unit: Option<&str>) -> Prices {
    Prices { price_fixed: fixed.map(d), price_subscription: subscription.map(d), price_per_unit: per_unit.map(d) }
}

fn value(n: u128, name: &str, fixed: Option<&str>, subscription: Option<&str>, per_unit: Option<&str>) -> OptionValue {
    OptionValue {
        id: Uuid::from_u128(n),
        name: name.into(),
        extra_price_fixed: fixed.map(d),
        extra_price_subscription: subscription.map(d),
        extra_price_per_unit: per_unit.map(d),
    }
}

const SMALL: u128 = 0x51;
const LARGE: u128 = 0x52;
const REGION: u128 = 0x60;
const FRANKFURT: u128 = 0x61;
const DUBLIN: u128 = 0x62;
const ADDONS: u128 = 0x70;
const BACKUP: u128 = 0x71;
const STAGING: u128 = 0x72;

/// Managed hosting: 99 once, 49.90 a month; variant Small 29.90 a month, Large no prices of
/// its own; Region (required): Frankfurt +5 a month, Dublin nothing; Add-ons: Backup +20 once
/// and +9.95 a month, Staging +15 a month.
fn hosting() -> ProductRecord {
    let definition = ProductDefinition {
        category_id: Uuid::nil(),
        name: "Managed hosting".into(),
        description: Doc::empty(),
        prices: prices(Some("99"), Some("49.9"), None),
        price_unit_name: None,
        price_frequency: Some(1),
        contract_period_months: Some(12),
        renewal_mode: Some(RenewalMode::Automatic),
        variants: vec![
            VariantRecord {
                id: Uuid::from_u128(SMALL),
                name: "Small".into(),
                description: None,
                prices: prices(None, Some("29.9"), None),
            },
            VariantRecord {
                id: Uuid::from_u128(LARGE),
                name: "Large".into(),
                description: None,
                prices: prices(None, None, None),
            },
        ],
        options: vec![
            ProductOption {
                id: Uuid::from_u128(REGION),
                name: "Region".into(),
                is_multiple: false,
                is_required: true,
                values: vec![
                    value(FRANKFURT, "Frankfurt", None, Some("5"), None),
                    value(DUBLIN, "Dublin", None, None, None),
                ],
            },
            ProductOption {
                id: Uuid::from_u128(ADDONS),
                name: "Add-ons".into(),
                is_multiple: true,
                is_required: false,
                values: vec![
                    value(BACKUP, "Backup", Some("20"), Some("9.95"), None),
                    value(STAGING, "Staging", None, Some("15"), None),
                ],
            },
        ],
        logo_id: None,
    };
    ProductRecord { id: Uuid::from_u128(0x50), definition, created_at: String::new() }
}

/// Support hours: 95 per hour, monthly; option Priority: 24/7 +12.50 per hour.
fn support_hours() -> ProductRecord {
    let mut product = hosting();
    product.definition.name = "Support hours".into();
    product.definition.prices = prices(None, None, Some("95"));
    product.definition.price_unit_name = Some("hour".into());
    product.definition.variants.truncate(0);
    product.definition.options = vec![ProductOption {
        id: Uuid::from_u128(0x80),
        name: "Priority".into(),
        is_multiple: false,
        is_required: false,
        values: vec![value(0x81, "24/7", None, None, Some("12.5"))],
    }];
    product
}

fn import_of(product: ProductRecord, quantity: &str) -> ProjectProductRecord {
    ProjectProductRecord {
        id: Uuid::from_u128(0x99),
        project_id: Uuid::nil(),
        import: Import {
            quantity: d(quantity),
            options: vec![],
            custom_prices: vec![],
            active_variant_id: None,
            active_from_type: ActiveFromType::Immediately,
            active_from_fixed_date: None,
            contract_period_months: 12,
            price_frequency: product.price_frequency,
            renewal_mode: product.renewal_mode.unwrap_or_default(),
        },
        product,
        created_at: "2026-11-27T09:30:00.000Z".into(),
        created_by: Uuid::nil(),
    }
}

fn choose(import: &mut ProjectProductRecord, option: u128, values: &[u128]) {
    import.import.options.push(ChosenOption {
        id: Uuid::from_u128(option),
        name: String::new(),
        value: values.iter().map(|v| Uuid::from_u128(*v)).collect(),
    });
}

fn custom(import: &mut ProjectProductRecord, key: &str, overrides: Prices) {
    import.import.custom_prices.push(CustomPrice { key: key.into(), prices: overrides });
}

/// (charge, period start, extras' amounts, amount) of each line.
fn summary(lines: &[ProductLine]) -> Vec<(ProductCharge, Option<Date>, Vec<Decimal>, Decimal)> {
    lines.iter().map(|l| (l.charge, l.period_start, l.extras.iter().map(|e| e.amount).collect(), l.amount)).collect()
}

#[test]
fn one_time_and_subscription_prices_from_the_day_of_the_import() {
    // Imported 27 November 2026 (Immediately), quantity 3, Region Dublin (no extra): 99 once
    // (the quantity counts units of a per-unit price only), 49.90 for 27 Nov – 26 Dec.
    let mut import = import_of(hosting(), "3");
    choose(&mut import, REGION, &[DUBLIN]);
    let from = active_from(&import, None).unwrap();
    assert_eq!(from, date!(2026 - 11 - 27));
    let lines = product_lines(&import, from, date!(2026 - 11 - 27), 2);
    assert_eq!(
        summary(&lines),
        [
            (ProductCharge::OneTime, None, vec![], d("99")),
            (ProductCharge::Subscription, Some(date!(2026 - 11 - 27)), vec![], d("49.9"))
        ]
    );
    assert_eq!(lines[1].period_end, Some(date!(2026 - 12 - 26)));
    assert_eq!(lines[0].line_id, format!("product:{}:oneTime", Uuid::from_u128(0x99)));
    assert_eq!(lines[1].line_id, format!("product:{}:subscription:2026-11-27", Uuid::from_u128(0x99)));
    assert!(lines.iter().all(|l| is_line_id(&l.line_id)));
    // The day before: nothing; two months on, the renewing subscription has three periods.
    assert!(product_lines(&import, from, date!(2026 - 11 - 26), 2).is_empty());
    let later = product_lines(&import, from, date!(2027 - 01 - 27), 2);
    assert_eq!(later.iter().filter(|l| l.charge == ProductCharge::Subscription).count(), 3);
}

#[test]
fn per_unit_prices_count_the_quantity_with_their_extras() {
    // 10 hours × 90 (the custom base price) = 900; 10 × 12.50 (24/7) = 125; 1025 a month.
    let mut import = import_of(support_hours(), "10");
    custom(&mut import, "base", prices(None, None, Some("90")));
    choose(&mut import, 0x80, &[0x81]);
    let lines = product_lines(&import, date!(2026 - 11 - 01), date!(2026 - 11 - 30), 2);
    assert_eq!(summary(&lines), [(ProductCharge::PerUnit, Some(date!(2026 - 11 - 01)), vec![d("125")], d("1025"))]);
    assert_eq!((lines[0].quantity, lines[0].unit_price, lines[0].base_amount), (d("10"), d("90"), d("900")));
    assert_eq!(lines[0].unit_name.as_deref(), Some("hour"));
    assert_eq!(lines[0].extras[0].name, "Priority: 24/7");
    // 1.5 hours: 1.5 × 90 = 135; 1.5 × 12.50 = 18.75; 153.75.
    import.import.quantity = d("1.5");
    let lines = product_lines(&import, date!(2026 - 11 - 01), date!(2026 - 11 - 30), 2);
    assert_eq!(summary(&lines), [(ProductCharge::PerUnit, Some(date!(2026 - 11 - 01)), vec![d("18.75")], d("153.75"))]);
}

#[test]
fn a_fixed_date_starts_the_product_and_a_stopping_contract_ends_it() {
    // 300 a quarter from 15 January 2027, a 7-month contract that stops: 15 Jan – 14 Apr 300,
    // 15 Apr – 14 Jul 300, 15 Jul – 14 Aug (1 month of 3) 300 × 1 ÷ 3 = 100; 700 in all.
    let mut product = hosting();
    product.definition.prices = prices(None, Some("300"), None);
    let mut import = import_of(product, "1");
    import.import.active_from_type = ActiveFromType::FixedDate;
    import.import.active_from_fixed_date = Some("2027-01-15".into());
    import.import.price_frequency = Some(3);
    import.import.contract_period_months = 7;
    import.import.renewal_mode = RenewalMode::Stops;
    let from = active_from(&import, None).unwrap();
    assert_eq!(from, date!(2027 - 01 - 15));
    assert!(product_lines(&import, from, date!(2027 - 01 - 14), 2).is_empty(), "not before its date");
    assert_eq!(product_lines(&import, from, date!(2027 - 01 - 15), 2).len(), 1);
    let lines = product_lines(&import, from, date!(2030 - 01 - 01), 2);
    let spans: Vec<_> =
        lines.iter().map(|l| (l.period_start.unwrap(), l.period_end.unwrap(), l.months, l.amount)).collect();
    assert_eq!(
        spans,
        [
            (date!(2027 - 01 - 15), date!(2027 - 04 - 14), Some(3), d("300")),
            (date!(2027 - 04 - 15), date!(2027 - 07 - 14), Some(3), d("300")),
            (date!(2027 - 07 - 15), date!(2027 - 08 - 14), Some(1), d("100")),
        ]
    );
    // A third of 100 rounds: a 4-month contract of 100 a quarter is 100 + 33.33.
    import.import.contract_period_months = 4;
    import.product.definition.prices = prices(None, Some("100"), None);
    let amounts: Vec<Decimal> =
        product_lines(&import, from, date!(2030 - 01 - 01), 2).iter().map(|l| l.amount).collect();
    assert_eq!(amounts, [d("100"), d("33.33")]);
}

#[test]
fn every_price_frequency_charges_its_period() {
    // 1188 a year billed monthly (99), quarterly (297), half-yearly (594) or yearly (1188) is
    // 1188 over the year, from 1 March 2026 (periods starting 1 March 2026 – 28 February 2027).
    for (frequency, each, count) in [(1, "99", 12), (3, "297", 4), (6, "594", 2), (12, "1188", 1)] {
        let mut product = hosting();
        product.definition.prices = prices(None, Some(each), None);
        let mut import = import_of(product, "1");
        import.import.price_frequency = Some(frequency);
        let lines = product_lines(&import, date!(2026 - 03 - 01), date!(2027 - 02 - 28), 2);
        assert_eq!(lines.len(), count, "every {frequency} months");
        assert_eq!(lines.iter().map(|l| l.amount).sum::<Decimal>(), d("1188"), "every {frequency} months");
        assert!(lines.iter().all(|l| l.price_frequency == Some(frequency as u32)));
    }
}

#[test]
fn periods_anchored_at_a_month_s_last_day_clamp_to_shorter_months() {
    let periods: Vec<_> = product_periods(date!(2026 - 01 - 31), 1, None, date!(2026 - 03 - 31))
        .iter()
        .map(|p| (p.period.start, p.period.end))
        .collect();
    assert_eq!(
        periods,
        [
            (date!(2026 - 01 - 31), date!(2026 - 02 - 27)),
            (date!(2026 - 02 - 28), date!(2026 - 03 - 30)),
            (date!(2026 - 03 - 31), date!(2026 - 04 - 29)),
        ]
    );
}

#[test]
fn custom_prices_and_a_variant_replace_the_catalog_s_and_option_values_add_extras() {
    // Variant Small at a custom 25 a month (its catalog price 29.90 and the product's 49.90
    // give way); Frankfurt at a custom 4.50, Backup 9.95, Staging 15: 25 + 4.5 + 9.95 + 15 =
    // 54.45 a month. Once: the base one-time price set to 0 (free), Backup's 20: 20.
    let mut import = import_of(hosting(), "2");
    import.import.active_variant_id = Some(Uuid::from_u128(SMALL));
    custom(&mut import, &format!("variant_{}", Uuid::from_u128(SMALL)), prices(None, Some("25"), None));
    custom(&mut import, &format!("option_{}", Uuid::from_u128(FRANKFURT)), prices(None, Some("4.5"), None));
    custom(&mut import, "base", prices(Some("0"), None, None));
    choose(&mut import, REGION, &[FRANKFURT]);
    choose(&mut import, ADDONS, &[BACKUP, STAGING]);
    let lines = product_lines(&import, date!(2026 - 11 - 01), date!(2026 - 11 - 01), 2);
    assert_eq!(
        summary(&lines),
        [
            (ProductCharge::OneTime, None, vec![d("20")], d("20")),
            (ProductCharge::Subscription, Some(date!(2026 - 11 - 01)), vec![d("4.5"), d("9.95"), d("15")], d("54.45")),
        ]
    );
    assert_eq!((lines[1].unit_price, lines[1].variant_name.as_deref()), (d("25"), Some("Small")));
    assert_eq!(lines[0].base_amount, d("0"));
    // Without the variant's custom price: its catalog 29.90.
    import.import.custom_prices.retain(|c| !c.key.starts_with("variant_"));
    assert_eq!(unit_price(&import, ProductCharge::Subscription), d("29.9"));
    // A variant without a price of its own (Large): the product's 49.90.
    import.import.active_variant_id = Some(Uuid::from_u128(LARGE));
    assert_eq!(unit_price(&import, ProductCharge::Subscription), d("49.9"));
    // No price and no extra of a kind: no line of it.
    assert_eq!(unit_price(&import, ProductCharge::PerUnit), d("0"));
    assert!(lines.iter().all(|l| l.charge != ProductCharge::PerUnit));
}

#[test]
fn a_product_active_with_the_project_s_billing_waits_for_it() {
    let mut import = import_of(hosting(), "1");
    import.import.active_from_type = ActiveFromType::ProjectBilling;
    // Imported 27 November 2026.
    assert_eq!(active_from(&import, None), None, "the project bills nothing yet");
    assert_eq!(active_from(&import, Some(date!(2027 - 01 - 01))), Some(date!(2027 - 01 - 01)));
    assert_eq!(active_from(&import, Some(date!(2026 - 03 - 01))), Some(date!(2026 - 11 - 27)), "not before the import");
}

#[test]
fn line_ids_are_recognised_by_their_form() {
    let id = Uuid::from_u128(7);
    for good in [
        format!("position:{id}"),
        format!("subscription:{id}"),
        format!("product:{id}:oneTime"),
        format!("product:{id}:subscription:2026-01-31"),
        format!("product:{id}:perUnit:2026-01-31"),
    ] {
        assert!(is_line_id(&good), "{good}");
    }
    for bad in [
        format!("position:{}", id.simple()),
        format!("product:{id}:subscription"),
        format!("product:{id}:oneTime:2026-01-31"),
        format!("product:{id}:perUnit:2026-02-30"),
        format!("task:{id}"),
        format!("subscription:{id}:2026-01-31"),
        String::new(),
    ] {
        assert!(!is_line_id(&bad), "{bad}");
    }
}

fn cents(max: i64) -> impl Strategy<Value = Decimal> {
    (0..=max).prop_map(|c| Decimal::new(c, 2))
}

fn any_day() -> impl Strategy<Value = Date> {
    (0i32..365 * 900).prop_map(|n| date!(1900 - 01 - 01) + time::Duration::days(i64::from(n)))
}

proptest! {
    #[test]
    fn a_position_s_line_is_never_negative(
        price in cents(100_000_000_000),
        percentage in any::<bool>(),
        amount in cents(100_000_000_000),
        minor in 0u32..=4,
    ) {
        let kind = if percentage { DiscountType::Percentage } else { DiscountType::Fixed };
        let mut record = position("0", kind, "0");
        record.price = price;
        record.discount_amount = amount;
        let line = position_line(&record, minor);
        prop_assert!(line.amount >= Decimal::ZERO);
        prop_assert!(line.discount >= Decimal::ZERO);
        prop_assert_eq!(line.amount + line.discount, line.price);
        prop_assert!(line.amount.scale() <= minor && line.discount.scale() <= minor);
    }

    /// A subscription's periods over a year add up to the price of a year, for every
    /// frequency and start day; and a contract that stops bills exactly its months.
    #[test]
    fn a_subscription_s_periods_sum_to_its_months(
        frequency in prop::sample::select(vec![1u32, 3, 6, 12]),
        price in cents(100_000_000_000),
        start in any_day(),
        contract in 1u32..=120,
    ) {
        let year_end = periods::add_months(start, 12).previous_day().unwrap();
        let renewing = product_periods(start, frequency, None, year_end);
        prop_assert_eq!(renewing.len() as u32, 12 / frequency);
        prop_assert!(renewing.iter().all(|p| p.months == frequency));
        let mut product = hosting();
        product.definition.prices = prices(None, Some(&price.to_string()), None);
        let mut import = import_of(product, "1");
        import.import.price_frequency = Some(i64::from(frequency));
        let year: Decimal = product_lines(&import, start, year_end, 2)
            .iter().filter(|l| l.charge == ProductCharge::Subscription).map(|l| l.amount).sum();
        prop_assert_eq!(year, price * Decimal::from(12 / frequency));

        let stopping = product_periods(start, frequency, Some(contract), date!(2999 - 12 - 31));
        prop_assert_eq!(stopping.iter().map(|p| p.months).sum::<u32>(), contract);
        let contract_end = periods::add_months(start, contract).previous_day().unwrap();
        prop_assert_eq!(stopping.last().map(|p| p.period.end), Some(contract_end));
        for pair in stopping.windows(2) {
            prop_assert_eq!(pair[0].period.end.next_day(), Some(pair[1].period.start));
        }
    }

    /// A product active from a fixed date has no line before it, and every line on or after
    /// it is due between that date and today.
    #[test]
    fn a_fixed_date_product_is_not_billed_before_its_date(fixed in any_day(), today in any_day()) {
        let mut import = import_of(hosting(), "1");
        import.import.active_from_type = ActiveFromType::FixedDate;
        import.import.active_from_fixed_date = Some(day::text(fixed));
        let from = active_from(&import, None).unwrap();
        prop_assert_eq!(from, fixed);
        let lines = product_lines(&import, from, today, 2);
        if today < fixed {
            prop_assert!(lines.is_empty());
        } else {
            prop_assert!(lines.iter().any(|l| l.charge == ProductCharge::OneTime));
            prop_assert!(lines.iter().all(|l| fixed <= l.due_on && l.due_on <= today));
        }
    }
}
