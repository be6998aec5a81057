//! Quotation arithmetic (spec §2.3): line totals, sub-total, tax and total, in exact decimals.
//!
//! The rounding rule (docs/tasks.md, "Amounts"): every amount that is a product (a line's
//! `quantity × unitPrice`, an option's `unitPrice × quantity`, the tax `subTotal × tax / 100`)
//! is rounded once, to the currency's minor unit, half away from zero (commercial rounding).
//! Sums of rounded amounts are exact and are never rounded again. So the document adds up
//! with a pocket calculator from the numbers it shows: `subTotal` is the sum of the shown line
//! and option totals, and `total` is `subTotal + taxAmount`, to the cent, always.

use rust_decimal::{Decimal, RoundingStrategy};

/// One line to price: its quantity, unit price and the unit prices of its options.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub quantity: Decimal,
    pub unit_price: Decimal,
    pub option_prices: Vec<Decimal>,
}

/// A priced line: `total` = quantity × unit price (without options); each option's total is
/// its unit price × the line's quantity.
#[derive(Debug, Clone, PartialEq)]
pub struct PricedLine {
    pub total: Decimal,
    pub option_totals: Vec<Decimal>,
}

/// The totals of a priced document.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Totals {
    pub sub_total: Decimal,
    pub tax_amount: Decimal,
    pub total: Decimal,
}

/// Rounds an amount to `minor_units` decimal places, half away from zero.
pub fn round_amount(amount: Decimal, minor_units: u32) -> Decimal {
    amount.round_dp_with_strategy(minor_units, RoundingStrategy::MidpointAwayFromZero).normalize()
}

/// The share of a period's price for `months` of its `frequency` months (a shorter last
/// period, prorated by whole months): `full × months ÷ frequency`, unrounded (the caller rounds
/// the amount once). The full price when the months are the frequency (or the frequency is 0).
pub fn prorate(full: Decimal, months: u32, frequency: u32) -> Decimal {
    if months == frequency || frequency == 0 { full } else { full * Decimal::from(months) / Decimal::from(frequency) }
}

/// Prices the lines under a tax rate in percent, rounding to `minor_units` (see the module
/// comment). The inputs' bounds (docs/tasks.md) keep every product far inside `Decimal`.
pub fn price(lines: &[Line], tax_rate: Decimal, minor_units: u32) -> (Vec<PricedLine>, Totals) {
    let priced: Vec<PricedLine> = lines
        .iter()
        .map(|line| PricedLine {
            total: round_amount(line.quantity * line.unit_price, minor_units),
            option_totals: line.option_prices.iter().map(|p| round_amount(*p * line.quantity, minor_units)).collect(),
        })
        .collect();
    let sub_total: Decimal = priced.iter().map(|l| l.total + l.option_totals.iter().sum::<Decimal>()).sum();
    let tax_amount = round_amount(sub_total * tax_rate / Decimal::ONE_HUNDRED, minor_units);
    let totals = Totals { sub_total: sub_total.normalize(), tax_amount, total: (sub_total + tax_amount).normalize() };
    (priced, totals)
}

/// The number of decimal places of a currency's minor unit (ISO 4217). Two unless the code is
/// one of the currencies listed here; a code the table does not know gets two.
pub fn minor_units(currency: &str) -> u32 {
    const NONE: &[&str] = &[
        "BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI", "VND", "VUV", "XAF", "XOF",
        "XPF",
    ];
    const THREE: &[&str] = &["BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"];
    const FOUR: &[&str] = &["CLF", "UYW"];
    if NONE.contains(&currency) {
        0
    } else if THREE.contains(&currency) {
        3
    } else if FOUR.contains(&currency) {
        4
    } else {
        2
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::str::FromStr;

    fn d(text: &str) -> Decimal {
        Decimal::from_str(text).unwrap()
    }

    #[test]
    fn the_largest_quotation_the_bounds_allow_stays_exact_as_doubles() {
        use crate::money::MAX_EXACT_AMOUNT;
        use crate::task::{MAX_ESTIMATED_HOURS, MAX_OPTIONS, MAX_PRICE, MAX_PRODUCTS, MAX_QUANTITY};
        assert_eq!(MAX_EXACT_AMOUNT, d("9999999999999.99"), "15 significant digits");
        let top = |cents: i64| Decimal::new(cents, 2);
        let top_price = top(MAX_PRICE * 100 - 1);
        let estimate =
            Line { quantity: Decimal::from(MAX_ESTIMATED_HOURS), unit_price: top_price, option_prices: vec![] };
        let product = Line {
            quantity: Decimal::from(MAX_QUANTITY),
            unit_price: top_price,
            option_prices: vec![top_price; MAX_OPTIONS],
        };
        let mut lines = vec![estimate];
        lines.extend(std::iter::repeat_n(product, MAX_PRODUCTS));
        let (priced, totals) = price(&lines, Decimal::ONE_HUNDRED, 2);
        let amounts = priced.iter().flat_map(|p| std::iter::once(p.total).chain(p.option_totals.iter().copied()));
        for amount in amounts.chain([totals.sub_total, totals.tax_amount, totals.total]) {
            assert!(amount <= MAX_EXACT_AMOUNT, "{amount}");
            // Exact as a double with its cents: the double's shortest form is the amount.
            let double = rust_decimal::prelude::ToPrimitive::to_f64(&amount).unwrap();
            assert_eq!(d(&double.to_string()), amount.normalize());
        }
    }

    fn line(quantity: &str, unit_price: &str, options: &[&str]) -> Line {
        Line { quantity: d(quantity), unit_price: d(unit_price), option_prices: options.iter().map(|o| d(o)).collect() }
    }

    /// Amounts computed by hand (quantity × price, rounded half away from zero to the cent).
    #[test]
    fn hand_computed_documents() {
        struct Case {
            lines: Vec<Line>,
            tax: &'static str,
            minor: u32,
            line_totals: Vec<(&'static str, Vec<&'static str>)>,
            totals: (&'static str, &'static str, &'static str),
        }
        let cases = [
            // 12.5 h × 95 = 1187.50; 1 × 450 = 450 + option 120; 40 × 4.5 = 180.
            // 1937.50 × 19 % = 368.125 → 368.13.
            Case {
                lines: vec![line("12.5", "95", &[]), line("1", "450", &["120"]), line("40", "4.5", &[])],
                tax: "19",
                minor: 2,
                line_totals: vec![("1187.5", vec![]), ("450", vec!["120"]), ("180", vec![])],
                totals: ("1937.5", "368.13", "2305.63"),
            },
            // 0.75 h × 110 = 82.50; 3 h × 95 = 285 + options 3 × 12.5 = 37.5, 3 × 0.99 = 2.97.
            // 407.97 × 7 % = 28.5579 → 28.56.
            Case {
                lines: vec![line("0.75", "110", &[]), line("3", "95", &["12.5", "0.99"])],
                tax: "7",
                minor: 2,
                line_totals: vec![("82.5", vec![]), ("285", vec!["37.5", "2.97"])],
                totals: ("407.97", "28.56", "436.53"),
            },
            // 1.33 h × 80.5 = 107.065 → 107.07 (half away from zero); 19 % of it: 20.3433 → 20.34.
            Case {
                lines: vec![line("1.33", "80.5", &[])],
                tax: "19",
                minor: 2,
                line_totals: vec![("107.07", vec![])],
                totals: ("107.07", "20.34", "127.41"),
            },
            // 0.25 × 0.1 = 0.025 → 0.03; 7.7 % of 0.03 = 0.00231 → 0.
            Case {
                lines: vec![line("0.25", "0.1", &[])],
                tax: "7.7",
                minor: 2,
                line_totals: vec![("0.03", vec![])],
                totals: ("0.03", "0", "0.03"),
            },
            // Yen have no minor unit: 2.5 × 999 = 2497.5 → 2498; 10 % = 249.8 → 250.
            Case {
                lines: vec![line("2.5", "999", &[])],
                tax: "10",
                minor: 0,
                line_totals: vec![("2498", vec![])],
                totals: ("2498", "250", "2748"),
            },
            // No lines, no tax: all zero.
            Case { lines: vec![], tax: "0", minor: 2, line_totals: vec![], totals: ("0", "0", "0") },
            // A zero quantity prices its options at zero too.
            Case {
                lines: vec![line("0", "100", &["50"])],
                tax: "19",
                minor: 2,
                line_totals: vec![("0", vec!["0"])],
                totals: ("0", "0", "0"),
            },
        ];
        for (i, case) in cases.iter().enumerate() {
            let (priced, totals) = price(&case.lines, d(case.tax), case.minor);
            let expected: Vec<PricedLine> = case
                .line_totals
                .iter()
                .map(|(t, o)| PricedLine { total: d(t), option_totals: o.iter().map(|x| d(x)).collect() })
                .collect();
            assert_eq!(priced, expected, "case {i}");
            let (sub, tax, total) = case.totals;
            assert_eq!(totals, Totals { sub_total: d(sub), tax_amount: d(tax), total: d(total) }, "case {i}");
        }
    }

    #[test]
    fn rounding_is_half_away_from_zero_to_the_minor_unit() {
        assert_eq!(round_amount(d("0.005"), 2), d("0.01"));
        assert_eq!(round_amount(d("0.0049999"), 2), d("0"));
        assert_eq!(round_amount(d("2.675"), 2), d("2.68"), "exact decimals: no binary 2.67499…");
        assert_eq!(round_amount(d("1.0005"), 3), d("1.001"));
        assert_eq!(round_amount(d("-0.125"), 2), d("-0.13"));
    }

    #[test]
    fn minor_units_follow_iso_4217() {
        assert_eq!(
            [minor_units("EUR"), minor_units("JPY"), minor_units("KWD"), minor_units("CLF"), minor_units("XYZ")],
            [2, 0, 3, 4, 2]
        );
    }

    /// Amounts within the inputs' bounds: at most two decimals.
    fn amount(max_cents: i64) -> impl Strategy<Value = Decimal> {
        (0..=max_cents).prop_map(|c| Decimal::new(c, 2))
    }

    fn lines() -> impl Strategy<Value = Vec<Line>> {
        let line = (amount(100_000_000), amount(100_000_000_000), prop::collection::vec(amount(100_000_000_000), 0..5))
            .prop_map(|(quantity, unit_price, option_prices)| Line { quantity, unit_price, option_prices });
        prop::collection::vec(line, 0..12)
    }

    proptest! {
        #[test]
        fn the_document_always_adds_up(lines in lines(), tax in amount(10_000), minor in 0u32..=4) {
            let (priced, totals) = price(&lines, tax, minor);
            let sum: Decimal = priced.iter().map(|l| l.total + l.option_totals.iter().sum::<Decimal>()).sum();
            prop_assert_eq!(totals.sub_total, sum);
            prop_assert_eq!(totals.total, totals.sub_total + totals.tax_amount);
            // Every shown amount is in the currency's minor unit and within half a unit of the
            // exact product.
            let half = Decimal::new(5, minor + 1);
            for (line, p) in lines.iter().zip(&priced) {
                prop_assert!(p.total.scale() <= minor);
                prop_assert!((p.total - line.quantity * line.unit_price).abs() <= half);
                for (price, total) in line.option_prices.iter().zip(&p.option_totals) {
                    prop_assert!((*total - *price * line.quantity).abs() <= half);
                }
            }
            prop_assert!((totals.tax_amount - totals.sub_total * tax / Decimal::ONE_HUNDRED).abs() <= half);
        }
    }
}
