//! Catalog products (spec §2.8, §4.4): the create body, its conditional rules as plain
//! functions, and persistence. The record is `workapi_domain::catalog::ProductRecord`.

use rust_decimal::Decimal;
use uuid::Uuid;
use workapi_domain::catalog::{
    self, OptionValue, PriceFrequency, Prices, ProductDefinition, ProductOption, ProductRecord, RenewalMode,
    VariantRecord,
};
use workapi_kit::ApiResult;
use workapi_kit::entity::{Attempt, Created};
use workapi_kit::input::{
    self, At, Checked, Errors, Input, Integer, List, NonEmptyList, Nullable, Patch, ProductText, Text,
};
use workapi_kit::{ApiError, entity, files};
use workapi_store::clock;
use workapi_store::keys::WsKeys;
use workapi_store::{Condition, Store, StoreError};

pub const MAX_NAME_CHARS: usize = 200;
pub const MAX_UNIT_CHARS: usize = 50;
pub const MAX_VARIANTS: usize = 50;
pub const MAX_OPTIONS: usize = 50;
pub const MAX_VALUES: usize = 50;
/// Largest price: a billion.
pub const MAX_PRICE: i64 = 1_000_000_000;
/// Default contract period of a recurring product, in months.
pub const DEFAULT_CONTRACT_MONTHS: i64 = 12;

type Price = input::Decimal<0, MAX_PRICE, 2>;

fn price(p: Patch<Price>) -> Option<Decimal> {
    p.into_option().map(|d| d.0)
}

/// An option value in a create body.
#[derive(Input)]
pub struct OptionValueInput {
    name: Text<1, MAX_NAME_CHARS>,
    extra_price_fixed: Patch<Price>,
    extra_price_per_unit: Patch<Price>,
    extra_price_subscription: Patch<Price>,
}

/// An option in a create body.
#[derive(Input)]
pub struct OptionInput {
    name: Text<1, MAX_NAME_CHARS>,
    /// Several values may be chosen
    is_multiple: bool,
    /// An import must choose it
    is_required: bool,
    /// At least one
    values: NonEmptyList<OptionValueInput, MAX_VALUES>,
}

/// A variant in a create body.
#[derive(Input)]
pub struct VariantInput {
    name: Text<1, MAX_NAME_CHARS>,
    /// Rich text (product profile), or null
    description: Nullable<ProductText>,
    price_fixed: Patch<Price>,
    price_per_unit: Patch<Price>,
    price_subscription: Patch<Price>,
}

/// A new catalog product (spec §2.8). Ids of variants, options and values are generated; ids
/// sent with them are ignored. The product is stored whole, so its descriptions, variants and
/// options together must fit 400 KB once stored; a larger one is a 400 naming its largest part.
#[derive(Input)]
#[input(rules = product_rules)]
#[input(example = serde_json::json!({
    "name": "Managed hosting", "categoryId": "dd1a60b7-9ef0-440d-a7b7-0812147e4225",
    "description": "<p>Hosting with <strong>daily backups</strong></p>",
    "priceFixed": 99, "priceSubscription": 49.9, "priceFrequency": 1,
    "contractPeriodMonths": 12, "renewalMode": "Automatic",
    "variants": [{"name": "Small", "description": null, "priceSubscription": 29.9},
                 {"name": "Large", "description": "| CPU | RAM |\n|---|---|\n| 4 | 16 GB |", "priceSubscription": 79.9}],
    "options": [{"name": "Region", "isMultiple": false, "isRequired": true,
                 "values": [{"name": "Frankfurt"}, {"name": "Dublin", "extraPriceSubscription": 5}]}]}))]
pub struct NewProductBody {
    name: Text<1, MAX_NAME_CHARS>,
    /// A catalog category of the workspace
    category_id: Uuid,
    /// Rich text (product profile)
    description: ProductText,
    /// One-time price; null or 0 means none
    price_fixed: Patch<Price>,
    /// Recurring price
    price_subscription: Patch<Price>,
    /// Price per unit; needs priceUnitName
    price_per_unit: Patch<Price>,
    /// Required when a price per unit is above 0
    price_unit_name: Patch<Text<1, MAX_UNIT_CHARS>>,
    /// Required when a subscription or per-unit price is above 0
    price_frequency: Patch<PriceFrequency>,
    /// Default 12 when a subscription or per-unit price is above 0
    contract_period_months: Patch<Integer<1, 120>>,
    /// Default Automatic when a subscription or per-unit price is above 0
    renewal_mode: Patch<RenewalMode>,
    /// At least one
    variants: NonEmptyList<VariantInput, MAX_VARIANTS>,
    /// May be empty
    options: List<OptionInput, MAX_OPTIONS>,
    /// An image uploaded to this workspace (`POST /workspace/upload` returns its id); null or
    /// absent: no logo
    logo_id: Patch<Uuid>,
}

fn set(price: &Patch<Price>) -> bool {
    matches!(price, Patch::Value(d) if d.0 > Decimal::ZERO)
}

/// Whether a body sets a price per unit, and whether it is recurring (a subscription or
/// per-unit price above 0, of the product, a variant or an option value).
fn price_kinds<'a>(
    product: [Option<&'a Patch<Price>>; 2],
    variants: impl Iterator<Item = &'a VariantInput> + Clone,
    values: impl Iterator<Item = &'a OptionValueInput> + Clone,
) -> (bool, bool) {
    let [per_unit, subscription] = product.map(|p| p.is_some_and(set));
    let per_unit = per_unit
        || variants.clone().any(|v| set(&v.price_per_unit))
        || values.clone().any(|v| set(&v.extra_price_per_unit));
    let recurring = per_unit
        || subscription
        || variants.into_iter().any(|v| set(&v.price_subscription))
        || values.into_iter().any(|v| set(&v.extra_price_subscription));
    (per_unit, recurring)
}

/// Parses a create body and applies the conditional rules; every failing field is named.
pub fn parse_draft(value: &serde_json::Value) -> ApiResult<ProductDefinition> {
    input::parse::<NewProductBody>(value).map(draft)
}

/// The conditional rules of spec §2.8, on the fields that parsed (at least one variant and one
/// value per option are the lists' own bounds, `NonEmptyList`):
/// - a price per unit above 0 (of the product, a variant or an option value) needs
///   `priceUnitName`;
/// - a subscription or per-unit price above 0 (anywhere in the product) makes the product
///   recurring: `priceFrequency` is then required (`contractPeriodMonths` defaults to 12 and
///   `renewalMode` to Automatic, in [`draft`]).
fn product_rules(body: &NewProductBodyFields, _at: &At, errors: &mut Errors) {
    let variants = body.variants.iter().flat_map(|v| &v.0);
    let values = body.options.iter().flat_map(|o| &o.0).flat_map(|o| &o.values.0);
    let (per_unit, recurring) =
        price_kinds([body.price_per_unit.as_ref(), body.price_subscription.as_ref()], variants, values);
    if per_unit && missing(&body.price_unit_name) {
        errors.fail("priceUnitName", "priceUnitName is required when a price per unit is above 0");
    }
    if recurring && missing(&body.price_frequency) {
        errors.fail(
            "priceFrequency",
            "priceFrequency (1, 3, 6 or 12) is required when a subscription or per-unit price is above 0",
        );
    }
}

/// A field that parsed and was left out or null.
fn missing<T>(field: &Option<Patch<T>>) -> bool {
    matches!(field, Some(Patch::Absent | Patch::Null))
}

/// What a valid body stores: ids generated, defaults of a recurring product applied.
pub fn draft(body: NewProductBody) -> ProductDefinition {
    let (_, recurring) = price_kinds(
        [Some(&body.price_per_unit), Some(&body.price_subscription)],
        body.variants.0.iter(),
        body.options.0.iter().flat_map(|o| &o.values.0),
    );
    let prices = Prices {
        price_fixed: price(body.price_fixed),
        price_subscription: price(body.price_subscription),
        price_per_unit: price(body.price_per_unit),
    };
    let variants: Vec<VariantRecord> = body
        .variants
        .0
        .into_iter()
        .map(|v| VariantRecord {
            id: Uuid::new_v4(),
            name: v.name.into_string(),
            description: v.description.0.map(ProductText::into_doc),
            prices: Prices {
                price_fixed: price(v.price_fixed),
                price_subscription: price(v.price_subscription),
                price_per_unit: price(v.price_per_unit),
            },
        })
        .collect();
    let options = body
        .options
        .0
        .into_iter()
        .map(|o| ProductOption {
            id: Uuid::new_v4(),
            name: o.name.into_string(),
            is_multiple: o.is_multiple,
            is_required: o.is_required,
            values: o
                .values
                .0
                .into_iter()
                .map(|v| OptionValue {
                    id: Uuid::new_v4(),
                    name: v.name.into_string(),
                    extra_price_fixed: price(v.extra_price_fixed),
                    extra_price_per_unit: price(v.extra_price_per_unit),
                    extra_price_subscription: price(v.extra_price_subscription),
                })
                .collect(),
        })
        .collect();
    ProductDefinition {
        category_id: body.category_id,
        name: body.name.into_string(),
        description: body.description.into_doc(),
        prices,
        price_unit_name: body.price_unit_name.into_option().map(Text::into_string),
        price_frequency: body.price_frequency.into_option().map(|f| f.0),
        contract_period_months: body
            .contract_period_months
            .into_option()
            .map(|m| m.0)
            .or(recurring.then_some(DEFAULT_CONTRACT_MONTHS)),
        renewal_mode: body.renewal_mode.into_option().or(recurring.then_some(RenewalMode::Automatic)),
        variants,
        options,
        logo_id: body.logo_id.into_option(),
    }
}
fn record(id: Uuid, definition: ProductDefinition) -> ProductRecord {
    ProductRecord { id, definition, created_at: clock::now_rfc3339() }
}

/// The rules that need the store, on a body read field by field: its category must exist
/// (`categoryId`), and its logo, if any, must be an image uploaded to this workspace
/// (`logoId`). One store call each, for an id that parsed. Returns the logo's file record.
pub async fn check_references(
    store: &dyn Store,
    keys: WsKeys,
    body: &mut Checked<NewProductBody>,
) -> ApiResult<Option<files::FileRecord>> {
    if let Some(id) = body.fields.category_id
        && catalog::get_category(store, keys, id).await?.is_none()
    {
        body.fail("categoryId", "categoryId: no such catalog category");
    }
    let Some(Patch::Value(logo_id)) = body.fields.logo_id else { return Ok(None) };
    let logo = files::find_image(store, keys, logo_id).await?;
    if logo.is_none() {
        body.fail("logoId", NO_LOGO);
    }
    Ok(logo)
}

/// A new product (a fresh id), not written yet.
pub fn new_record(draft: ProductDefinition) -> ProductRecord {
    record(Uuid::new_v4(), draft)
}

/// Creates a product whose references were checked (one store call: put, `NotExists`; with the
/// request's idempotency completion, a transaction of both). A product with a logo also counts
/// as a use of the logo's file, in the same transaction ([`files::use_as_logo`]), which fails
/// when the file was deleted since it was checked: 400 `logoId`, nothing written.
pub async fn create(
    store: &dyn Store,
    keys: WsKeys,
    record: &ProductRecord,
    completion: Option<&entity::Completion>,
) -> ApiResult<()> {
    let Some(logo_id) = record.definition.logo_id else {
        return Ok(entity::create(store, record, keys, EXISTS, completion).await?);
    };
    entity::retry_on_conflict("The logo's file is being changed concurrently; retry", |_| async move {
        let logo = vec![files::use_as_logo(keys, logo_id)];
        match entity::create_with(store, record, keys, EXISTS, logo, completion).await? {
            Created::Done => Ok(Attempt::Done(())),
            Created::Contended => Ok(Attempt::Conflict),
            Created::Refused(_) => Err(ApiError::field("logoId", NO_LOGO)),
        }
    })
    .await
}

const EXISTS: &str = "Catalog product exists";
const NO_LOGO: &str = "logoId: no such image uploaded to this workspace";

/// The seed's create: the same rules, a given id, put only when absent (a product the API may
/// have changed since is left alone), a logo counted as [`create`] counts it. Whether it was
/// written.
pub async fn create_with_id(store: &dyn Store, keys: WsKeys, id: Uuid, draft: ProductDefinition) -> ApiResult<bool> {
    if draft.logo_id.is_some() {
        if entity::get::<ProductRecord>(store, &catalog::product_key(keys, id)).await?.is_some() {
            return Ok(false);
        }
        return create(store, keys, &record(id, draft), None).await.map(|()| true);
    }
    match store.put(entity::to_item(&record(id, draft), keys)?, Condition::NotExists).await {
        Ok(()) => Ok(true),
        Err(StoreError::ConditionFailed) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn body() -> Value {
        json!({"name": "Hosting", "categoryId": Uuid::nil(), "description": "x",
               "variants": [{"name": "S", "description": null}], "options": []})
    }

    fn with(changes: Value) -> Value {
        let mut b = body();
        for (k, v) in changes.as_object().unwrap() {
            b[k] = v.clone();
        }
        b
    }

    fn failing(v: Value) -> Vec<String> {
        parse_draft(&v).unwrap_err().errors.unwrap().into_keys().collect()
    }

    #[test]
    fn a_one_time_product_needs_no_recurring_fields() {
        let d = parse_draft(&with(json!({"priceFixed": 99.5}))).unwrap();
        assert_eq!(d.prices.price_fixed, Some(Decimal::new(995, 1)));
        assert_eq!((d.price_frequency, d.contract_period_months, d.renewal_mode), (None, None, None));
        assert_eq!(d.variants.len(), 1);
    }

    #[test]
    fn required_fields_are_named() {
        for field in ["name", "categoryId", "description", "variants", "options"] {
            let mut b = body();
            b.as_object_mut().unwrap().remove(field);
            assert_eq!(failing(b), [field], "{field}");
        }
        assert_eq!(failing(with(json!({"variants": []}))), ["variants"]);
        assert_eq!(failing(with(json!({"variants": [{"name": "S"}]}))), ["variants[0].description"]);
        assert_eq!(
            failing(with(json!({"options": [{"name": "O", "isMultiple": false, "isRequired": true, "values": []}]}))),
            ["options[0].values"]
        );
        assert_eq!(
            failing(with(json!({"options": [{"name": "O", "values": [{"name": "v"}]}]}))),
            ["options[0].isMultiple", "options[0].isRequired"]
        );
    }

    #[test]
    fn prices_are_exact_non_negative_with_two_decimals() {
        assert_eq!(failing(with(json!({"priceFixed": -1}))), ["priceFixed"]);
        assert_eq!(failing(with(json!({"priceFixed": 1.005}))), ["priceFixed"]);
        assert_eq!(
            failing(with(json!({"variants": [{"name": "S", "description": null, "priceFixed": -0.5}]}))),
            ["variants[0].priceFixed"]
        );
        let d = parse_draft(&with(json!({"priceFixed": 0.1, "priceSubscription": null}))).unwrap();
        assert_eq!(d.prices.price_fixed, Some(Decimal::new(1, 1)));
    }

    #[test]
    fn a_price_per_unit_needs_a_unit_name_and_a_frequency() {
        assert_eq!(failing(with(json!({"pricePerUnit": 2}))), ["priceFrequency", "priceUnitName"]);
        assert!(parse_draft(&with(json!({"pricePerUnit": 0}))).is_ok(), "0 is no price");
        let d = parse_draft(&with(json!({"pricePerUnit": 2, "priceUnitName": "GB", "priceFrequency": 3}))).unwrap();
        assert_eq!((d.contract_period_months, d.renewal_mode), (Some(12), Some(RenewalMode::Automatic)));
        let variant = json!([{"name": "S", "description": null, "pricePerUnit": 1}]);
        assert_eq!(failing(with(json!({"variants": variant}))), ["priceFrequency", "priceUnitName"]);
    }

    #[test]
    fn a_subscription_needs_a_frequency_of_1_3_6_or_12() {
        assert_eq!(failing(with(json!({"priceSubscription": 10}))), ["priceFrequency"]);
        assert_eq!(failing(with(json!({"priceSubscription": 10, "priceFrequency": 2}))), ["priceFrequency"]);
        let d = parse_draft(&with(json!({"priceSubscription": 10, "priceFrequency": 12, "contractPeriodMonths": 24,
            "renewalMode": "Stops"})))
        .unwrap();
        assert_eq!(
            (d.price_frequency, d.contract_period_months, d.renewal_mode),
            (Some(12), Some(24), Some(RenewalMode::Stops))
        );
        assert_eq!(failing(with(json!({"renewalMode": "Never"}))), ["renewalMode"]);
        assert_eq!(failing(with(json!({"contractPeriodMonths": 0}))), ["contractPeriodMonths"]);
        let value = json!([{"name": "O", "isMultiple": true, "isRequired": false,
            "values": [{"name": "v", "extraPriceSubscription": 1}]}]);
        assert_eq!(failing(with(json!({"options": value}))), ["priceFrequency"]);
    }

    #[test]
    fn descriptions_are_product_rich_text() {
        let d = parse_draft(&with(json!({"description": "<table><tr><td>a</td></tr></table>"}))).unwrap();
        assert!(workapi_richtext::to_html(&d.description).contains("<table>"));
        assert_eq!(failing(with(json!({"description": 5}))), ["description"]);
    }

    #[test]
    fn every_variant_option_and_value_gets_its_own_id() {
        let d = parse_draft(&with(json!({"variants": [{"name": "A", "description": null, "id": Uuid::nil()},
            {"name": "B", "description": "**b**"}],
            "options": [{"name": "O", "isMultiple": false, "isRequired": true, "values": [{"name": "1"}, {"name": "2"}]}]})))
        .unwrap();
        let mut ids: Vec<Uuid> = d.variants.iter().map(|v| v.id).collect();
        ids.extend(d.options.iter().flat_map(|o| std::iter::once(o.id).chain(o.values.iter().map(|v| v.id))));
        let unique: std::collections::HashSet<_> = ids.iter().collect();
        assert_eq!((ids.len(), unique.len()), (5, 5));
        assert!(!ids.contains(&Uuid::nil()), "sent ids are ignored");
    }
}
