//! Catalog products imported into a project (spec §4.4): an independent copy of the catalog
//! product as it was at the import, with the quantity, the chosen options, custom prices and
//! the subscription terms. Editing the catalog afterwards does not change it.

use crate::ProjectPath;
use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use uuid::Uuid;
use workapi_domain::catalog::{self, CatalogProduct, PriceFrequency, Prices, ProductRecord, RenewalMode};
/// The stored import and its parts live in the domain floor (billing reads them).
pub use workapi_domain::catalog::{
    ActiveFromType, ChosenOption, CustomPrice, Import, PriceTarget, ProjectProductRecord,
};
use workapi_domain::permissions::{Requirement, key};
use workapi_domain::project;
use workapi_kit::entity;
use workapi_kit::events::{Event, types};
use workapi_kit::http::Success;
use workapi_kit::idempotency::{Answer, Idempotency};
use workapi_kit::input::{self, At, Checked, DateOnly, Errors, Field, Input, Integer, List, Patch, SchemaRef, Schemas};
use workapi_kit::paging::{OrderKey, PageParams, Paged, Paging};
use workapi_kit::projection::{Projection, SuccessProjection};
use workapi_kit::request::{Body, Path};
use workapi_kit::{ApiError, ApiResult, AppState, Caller};
use workapi_store::Store;
use workapi_store::TxOp;
use workapi_store::clock;

/// Importing a product changes the project's commercial plan.
const EDIT_PROJECT: Requirement = Requirement::Permission(key::PROJECTS_EDIT);
/// Largest quantity of an import: with prices at most a billion, quantity × price stays at most
/// 10^12, inside the 15 significant digits that every amount keeps exactly as a JSON double
/// (`workapi_domain::money::MAX_EXACT_AMOUNT`, docs/conventions.md, "Numbers").
pub const MAX_QUANTITY: i64 = 1_000;
pub const MAX_CHOICES: usize = 50;
pub const MAX_CUSTOM_PRICES: usize = 200;
/// Default contract period of an import, in months (spec §4.4).
pub const DEFAULT_CONTRACT_MONTHS: i64 = 12;

type Price = input::Decimal<0, { crate::manual_positions::MAX_AMOUNT }, 2>;

/// The values chosen for one option of the product.
#[derive(Input)]
pub struct OptionChoice {
    /// An option of the product
    id: uuid::Uuid,
    /// Values of that option: exactly one for a single-choice option, at least one otherwise
    value: List<uuid::Uuid, MAX_CHOICES>,
}

/// Price overrides for one key of `customPrices`; an absent or null field keeps the catalog
/// price.
#[derive(Input)]
pub struct PriceOverride {
    price_fixed: Patch<Price>,
    price_subscription: Patch<Price>,
    price_per_unit: Patch<Price>,
}

/// `customPrices`: key → overrides.
pub struct CustomPrices(pub BTreeMap<PriceTarget, Prices>);

impl Field for CustomPrices {
    fn read(value: &serde_json::Value, at: &At, errors: &mut Errors) -> Option<Self> {
        let map = input::object(value, at, errors)?;
        if map.len() > MAX_CUSTOM_PRICES {
            errors.add(at, format!("customPrices may hold at most {MAX_CUSTOM_PRICES} keys"));
            return None;
        }
        let mut prices = BTreeMap::new();
        let mut valid = true;
        for (name, value) in map {
            let key_at = at.child(name);
            let target = PriceTarget::parse(name);
            let read = PriceOverride::read(value, &key_at, errors);
            match (target, read) {
                (Some(target), Some(o)) => {
                    let price = |p: Patch<Price>| p.into_option().map(|d| d.0);
                    let overrides = Prices {
                        price_fixed: price(o.price_fixed),
                        price_subscription: price(o.price_subscription),
                        price_per_unit: price(o.price_per_unit),
                    };
                    prices.insert(target, overrides);
                }
                (None, _) => {
                    errors
                        .add(&key_at, format!("{name}: keys are base, variant_<variantId> or option_<optionValueId>"));
                    valid = false;
                }
                (_, None) => valid = false,
            }
        }
        valid.then_some(CustomPrices(prices))
    }

    fn schema() -> SchemaRef {
        utoipa::openapi::schema::ObjectBuilder::new()
            .additional_properties(Some(PriceOverride::schema()))
            .property_names(Some(
                utoipa::openapi::schema::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::schema::Type::String)
                    .pattern(Some("^(base|variant_[0-9a-fA-F-]{36}|option_[0-9a-fA-F-]{36})$")),
            ))
            .description(Some("Keys base, variant_<variantId> or option_<optionValueId> of this product"))
            .into()
    }

    fn schemas(out: &mut Schemas) {
        PriceOverride::schemas(out)
    }
}

/// A catalog product to import (spec §4.4).
#[derive(Input)]
#[input(rules = import_rules)]
#[input(example = serde_json::json!({
    "productId": "0df8d341-3d46-44d0-b749-fb75cf4b6ca7", "quantity": 10, "options": [],
    "customPrices": {"base": {"pricePerUnit": 90}}, "activeFromType": "FixedDate",
    "activeFromFixedDate": "2027-01-01", "contractPeriodMonths": 24, "priceFrequency": 3, "renewalMode": "Stops"}))]
pub struct ImportBody {
    /// A product of the workspace's catalog (404 when it does not exist)
    product_id: uuid::Uuid,
    /// At least 1
    /// At least 1, at most two decimal places (1.5 licences of a per-unit product)
    quantity: input::Decimal<1, MAX_QUANTITY, 2>,
    /// May be empty; every required option of the product must be included
    options: List<OptionChoice, MAX_CHOICES>,
    custom_prices: CustomPrices,
    /// A variant of the product, or null
    active_variant_id: Patch<uuid::Uuid>,
    /// Default Immediately
    active_from_type: Option<ActiveFromType>,
    /// Required exactly when activeFromType is FixedDate
    active_from_fixed_date: Patch<DateOnly>,
    /// Default 12
    contract_period_months: Option<Integer<1, 120>>,
    /// Default: the catalog product's
    price_frequency: Option<PriceFrequency>,
    /// Default: the catalog product's, else Automatic
    renewal_mode: Option<RenewalMode>,
}

/// `activeFromFixedDate` is given exactly when `activeFromType` is FixedDate (skipped when
/// either failed to parse).
fn import_rules(body: &ImportBodyFields, _at: &At, errors: &mut Errors) {
    let (Some(active_from_type), Some(fixed_date)) = (&body.active_from_type, &body.active_from_fixed_date) else {
        return;
    };
    let has_date = matches!(fixed_date, Patch::Value(_));
    match (active_from_type.unwrap_or_default(), has_date) {
        (ActiveFromType::FixedDate, false) => {
            errors.fail("activeFromFixedDate", "activeFromFixedDate is required when activeFromType is FixedDate")
        }
        (ActiveFromType::Immediately | ActiveFromType::ProjectBilling, true) => {
            errors.fail("activeFromFixedDate", "activeFromFixedDate is only allowed when activeFromType is FixedDate")
        }
        _ => {}
    }
}

/// The rules of spec §4.4 that need the product, on the fields that parsed: every option and
/// value id belongs to it, every required option is present, a single-choice option gets
/// exactly one value, custom-price keys name the product, its variants or its option values,
/// and the active variant is one of its variants.
pub fn check_against(product: &ProductRecord, body: &mut Checked<ImportBody>) {
    let mut errors = Vec::<(String, String)>::new();
    let mut fail = |field: String, message: String| errors.push((field, message));
    let fields = &body.fields;
    if let Some(choices) = &fields.options {
        let mut seen = HashSet::new();
        for (i, choice) in choices.0.iter().enumerate() {
            let Some(option) = product.options.iter().find(|o| o.id == choice.id) else {
                fail(format!("options[{i}].id"), format!("options[{i}].id: not an option of this product"));
                continue;
            };
            if !seen.insert(option.id) {
                fail(format!("options[{i}].id"), format!("options[{i}].id: option {} appears twice", option.name));
            }
            for (j, value) in choice.value.0.iter().enumerate() {
                if !option.values.iter().any(|v| v.id == *value) {
                    fail(
                        format!("options[{i}].value[{j}]"),
                        format!("options[{i}].value[{j}]: not a value of {}", option.name),
                    );
                }
            }
            let distinct: HashSet<&Uuid> = choice.value.0.iter().collect();
            if distinct.len() != choice.value.0.len() {
                fail(format!("options[{i}].value"), format!("options[{i}].value: a value appears twice"));
            }
            if !option.is_multiple && choice.value.0.len() != 1 {
                fail(
                    format!("options[{i}].value"),
                    format!("{} is a single-choice option: exactly one value", option.name),
                );
            } else if choice.value.0.is_empty() {
                fail(format!("options[{i}].value"), format!("options[{i}].value: at least one value"));
            }
        }
        for option in product.options.iter().filter(|o| o.is_required) {
            if !seen.contains(&option.id) {
                fail("options".into(), format!("the required option {} ({}) is missing", option.name, option.id));
            }
        }
    }
    for target in fields.custom_prices.iter().flat_map(|c| c.0.keys()) {
        let belongs = match target {
            PriceTarget::Base => true,
            PriceTarget::Variant(id) => product.variants.iter().any(|v| v.id == *id),
            PriceTarget::OptionValue(id) => product.options.iter().flat_map(|o| &o.values).any(|v| v.id == *id),
        };
        if !belongs {
            let key = target.key();
            fail(
                format!("customPrices.{key}"),
                format!("customPrices.{key}: not a variant or option value of this product"),
            );
        }
    }
    if let Some(Patch::Value(id)) = fields.active_variant_id
        && !product.variants.iter().any(|v| v.id == id)
    {
        fail("activeVariantId".into(), "activeVariantId: not a variant of this product".into());
    }
    for (field, message) in errors {
        body.fail(&field, message);
    }
}

/// What a body that passed its rules and [`check_against`] stores, defaults applied (from the
/// spec and the product).
pub fn import_of(body: ImportBody, product: &ProductRecord) -> Import {
    debug_assert_eq!(body.product_id, product.id, "the product the body names");
    let options = body
        .options
        .0
        .into_iter()
        .map(|choice| ChosenOption {
            id: choice.id,
            name: product.options.iter().find(|o| o.id == choice.id).map(|o| o.name.clone()).unwrap_or_default(),
            value: choice.value.0,
        })
        .collect();
    Import {
        quantity: body.quantity.0,
        options,
        custom_prices: body
            .custom_prices
            .0
            .into_iter()
            .map(|(target, prices)| CustomPrice { key: target.key(), prices })
            .collect(),
        active_variant_id: body.active_variant_id.into_option(),
        active_from_type: body.active_from_type.unwrap_or_default(),
        active_from_fixed_date: body.active_from_fixed_date.into_option().map(|d| d.0.to_string()),
        contract_period_months: body.contract_period_months.map(|m| m.0).unwrap_or(DEFAULT_CONTRACT_MONTHS),
        price_frequency: body.price_frequency.map(|f| f.0).or(product.price_frequency),
        renewal_mode: body.renewal_mode.or(product.renewal_mode).unwrap_or_default(),
    }
}

/// A product of a project as the API returns it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(examples(json!({"id": "6c8e0a2b-4d6f-4a8c-8e0a-2b4d6f8a0c2e", "productId": "0df8d341-3d46-44d0-b749-fb75cf4b6ca7",
    "product": {"id": "0df8d341-3d46-44d0-b749-fb75cf4b6ca7", "categoryId": "e0754b39-a503-4b6b-98d5-bdb85fed70f8",
        "name": "Support hours", "description": "<p>Prepaid support, billed per hour.</p>", "priceFixed": null,
        "priceSubscription": null, "pricePerUnit": 95, "priceUnitName": "hour", "priceFrequency": 1,
        "contractPeriodMonths": 12, "renewalMode": "Automatic",
        "variants": [{"id": "2f4a6c8e-0b2d-4f6a-8c0e-2b4d6f8a0c2e", "name": "Standard", "description": null,
            "priceFixed": null, "priceSubscription": null, "pricePerUnit": null}],
        "options": [], "logoId": null, "logoUrl": null, "createdAt": "2026-11-24T02:00:00Z"},
    "quantity": 10, "options": [], "customPrices": {"base": {"priceFixed": null, "priceSubscription": null, "pricePerUnit": 90}},
    "activeVariantId": null, "activeFromType": "Immediately", "activeFromFixedDate": null,
    "contractPeriodMonths": 12, "priceFrequency": 1, "renewalMode": "Automatic", "createdAt": "2026-11-24T02:30:00Z"})))]
pub struct ProjectProduct {
    pub id: Uuid,
    /// The catalog product it was imported from
    pub product_id: Uuid,
    /// The copy of the catalog product taken at the import
    pub product: CatalogProduct,
    /// At least 1, at most two decimal places
    #[serde(with = "workapi_domain::money")]
    #[schema(value_type = f64)]
    pub quantity: rust_decimal::Decimal,
    pub options: Vec<ChosenOption>,
    /// The same form the import takes: `base`, `variant_<variantId>` or `option_<optionValueId>`
    /// → prices
    pub custom_prices: BTreeMap<String, Prices>,
    #[schema(required)]
    pub active_variant_id: Option<Uuid>,
    pub active_from_type: ActiveFromType,
    #[schema(required, format = Date)]
    pub active_from_fixed_date: Option<String>,
    pub contract_period_months: i64,
    #[schema(required)]
    pub price_frequency: Option<i64>,
    pub renewal_mode: RenewalMode,
    #[schema(format = DateTime)]
    pub created_at: String,
}

impl From<&ProjectProductRecord> for ProjectProduct {
    fn from(r: &ProjectProductRecord) -> ProjectProduct {
        ProjectProduct {
            id: r.id,
            product_id: r.product.id,
            product: CatalogProduct::from(&r.product),
            quantity: r.import.quantity,
            options: r.import.options.clone(),
            custom_prices: r.import.custom_prices.iter().map(|c| (c.key.clone(), c.prices.clone())).collect(),
            active_variant_id: r.import.active_variant_id,
            active_from_type: r.import.active_from_type,
            active_from_fixed_date: r.import.active_from_fixed_date.clone(),
            contract_period_months: r.import.contract_period_months,
            price_frequency: r.import.price_frequency,
            renewal_mode: r.import.renewal_mode,
            created_at: r.created_at.clone(),
        }
    }
}

/// Imports the product into the project: get the catalog product (404, or 400 when its id
/// is malformed, with every other problem of the body), check, put the copy (with the
/// request's idempotency completion, in one transaction).
pub async fn import(
    store: &dyn Store,
    scope: project::ProjectScope,
    mut body: Checked<ImportBody>,
    by: Uuid,
    completion: Option<&entity::Completion>,
    event: impl Fn(&ProjectProduct) -> ApiResult<TxOp>,
) -> ApiResult<Uuid> {
    let Some(product_id) = body.fields.product_id else { return Ok(body.finish().map(|_| Uuid::nil())?) };
    let product = catalog::get_product(store, scope.0, product_id)
        .await?
        .ok_or_else(|| ApiError::not_found("Catalog product not found"))?;
    check_against(&product, &mut body);
    let import = import_of(body.finish()?, &product);
    let record = ProjectProductRecord {
        id: Uuid::new_v4(),
        project_id: scope.1,
        product,
        import,
        created_at: clock::now_rfc3339(),
        created_by: by,
    };
    let beside = completion.cloned().unwrap_or_default().and(event(&ProjectProduct::from(&record))?);
    entity::create(store, &record, scope.0, "Project product exists", Some(&beside)).await?;
    Ok(record.id)
}

/// A product's place in the project's list: oldest import first, then id.
pub fn order(product: &ProjectProduct) -> OrderKey {
    OrderKey::new().text(product.created_at.clone()).id(product.id)
}

/// A project's products, oldest import first.
pub async fn list(store: &dyn Store, scope: project::ProjectScope) -> ApiResult<Vec<ProjectProduct>> {
    let all = catalog::project_products(store, scope).await?;
    let mut all: Vec<ProjectProduct> = all.iter().map(ProjectProduct::from).collect();
    all.sort_by_cached_key(order);
    Ok(all)
}

/// Import a catalog product
///
/// Imports a catalog product into the project as an independent copy (editing the catalog
/// afterwards does not change it), with the quantity, the chosen option values, custom prices
/// and the subscription terms. Needs `Projects.edit` and access to the project.
#[utoipa::path(post, path = "/projects/{projectId}/products", operation_id = "importProjectProduct",
    tag = "projects", params(ProjectPath), request_body = ImportBody,
    responses((status = 201, description = "Imported", body = SuccessProjection,
        example = json!({"success": true}))))]
pub async fn import_product(
    State(state): State<AppState>,
    caller: Caller,
    projection: Projection,
    Path(path): Path<ProjectPath>,
    idempotency: Idempotency,
    body: Body<ImportBody>,
) -> ApiResult<Answer> {
    let permit = caller.authorize(EDIT_PROJECT)?;
    let record = project::accessible(state.store(), caller.viewer(), path.project_id).await?;
    let body = body.check(&permit)?;
    let answer = idempotency.answer(StatusCode::CREATED, None, &projection.project(&Success { success: true })?)?;
    let project_id = record.project.id;
    let event = |product: &ProjectProduct| {
        Event::new(&caller, types::PROJECT_PRODUCT_IMPORTED, product.id).in_project(project_id).op(product)
    };
    import(state.store(), (caller.keys(), project_id), body, caller.user.id, answer.completion(), event).await?;
    Ok(answer)
}

/// List a project's products
///
/// The catalog products imported into the project, oldest first, each with its copy of the
/// catalog product.
#[utoipa::path(get, path = "/projects/{projectId}/products", operation_id = "listProjectProducts",
    tag = "projects", params(ProjectPath, PageParams),
    responses((status = 200, description = "The project's products, oldest first", body = [ProjectProduct])))]
pub async fn list_products(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<ProjectPath>,
    paging: Paging,
) -> ApiResult<Paged<ProjectProduct>> {
    caller.authorize(Requirement::Member)?;
    let record = project::accessible(state.store(), caller.viewer(), path.project_id).await?;
    paging.window(list(state.store(), (caller.keys(), record.project.id)).await?, order)?.answer()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};
    use workapi_domain::catalog::{OptionValue, ProductDefinition, ProductOption, VariantRecord};
    use workapi_store::keys::WsKeys;

    fn value(name: &str) -> OptionValue {
        OptionValue {
            id: Uuid::new_v4(),
            name: name.into(),
            extra_price_fixed: None,
            extra_price_per_unit: None,
            extra_price_subscription: None,
        }
    }

    fn product() -> ProductRecord {
        let definition = ProductDefinition {
            category_id: Uuid::new_v4(),
            name: "Hosting".into(),
            description: workapi_richtext::Doc::empty(),
            prices: Prices::default(),
            price_unit_name: None,
            price_frequency: Some(3),
            contract_period_months: Some(12),
            renewal_mode: Some(RenewalMode::Stops),
            variants: vec![VariantRecord {
                id: Uuid::new_v4(),
                name: "S".into(),
                description: None,
                prices: Prices::default(),
            }],
            options: vec![
                ProductOption {
                    id: Uuid::new_v4(),
                    name: "Region".into(),
                    is_multiple: false,
                    is_required: true,
                    values: vec![value("FRA"), value("DUB")],
                },
                ProductOption {
                    id: Uuid::new_v4(),
                    name: "Add-ons".into(),
                    is_multiple: true,
                    is_required: false,
                    values: vec![value("CDN"), value("Staging")],
                },
            ],
            logo_id: None,
        };
        ProductRecord { id: Uuid::new_v4(), definition, created_at: String::new() }
    }

    fn body(p: &ProductRecord, changes: Value) -> Value {
        let mut b = json!({"productId": p.id, "quantity": 1,
            "options": [{"id": p.options[0].id, "value": [p.options[0].values[0].id]}], "customPrices": {}});
        for (k, v) in changes.as_object().unwrap() {
            b[k] = v.clone();
        }
        b
    }

    fn run(p: &ProductRecord, changes: Value) -> ApiResult<Import> {
        let mut checked = workapi_kit::input::Checked::<ImportBody>::read(&body(p, changes))?;
        check_against(p, &mut checked);
        Ok(import_of(checked.finish()?, p))
    }

    fn failing(p: &ProductRecord, changes: Value) -> Vec<String> {
        run(p, changes).unwrap_err().errors.unwrap().into_keys().collect()
    }

    #[test]
    fn the_stored_import_keeps_its_choices_flat_beside_the_product() {
        let p = product();
        let record = ProjectProductRecord {
            id: Uuid::new_v4(),
            project_id: Uuid::new_v4(),
            product: p.clone(),
            import: run(&p, json!({"quantity": 4})).unwrap(),
            created_at: "2026-11-24T02:00:00.000Z".into(),
            created_by: Uuid::new_v4(),
        };
        let item = entity::to_item(&record, WsKeys::new(Uuid::nil())).unwrap();
        assert_eq!((item["quantity"].clone(), item["contractPeriodMonths"].clone()), (json!(4), json!(12)));
        assert!(item.get("import").is_none(), "the item's attributes are as before the flattening");
        let back: ProjectProductRecord = entity::from_item(item).unwrap();
        assert_eq!(back.import, record.import);
    }

    #[test]
    fn defaults_come_from_the_spec_and_the_product() {
        let p = product();
        let import = run(&p, json!({})).unwrap();
        assert_eq!(import.contract_period_months, 12);
        assert_eq!((import.price_frequency, import.renewal_mode), (Some(3), RenewalMode::Stops));
        assert_eq!(import.active_from_type, ActiveFromType::Immediately);
        assert_eq!(import.options[0].name, "Region");
    }

    #[test]
    fn options_must_belong_to_the_product_and_respect_their_kind() {
        let p = product();
        let (region, addons) = (&p.options[0], &p.options[1]);
        assert_eq!(failing(&p, json!({"options": []})), ["options"], "the required option is missing");
        assert_eq!(
            failing(
                &p,
                json!({"options": [{"id": Uuid::new_v4(), "value": []}, {"id": region.id, "value": [region.values[0].id]}]})
            ),
            ["options[0].id"]
        );
        assert_eq!(
            failing(&p, json!({"options": [{"id": region.id, "value": [addons.values[0].id]}]})),
            ["options[0].value[0]"]
        );
        assert_eq!(
            failing(&p, json!({"options": [{"id": region.id, "value": [region.values[0].id, region.values[1].id]}]})),
            ["options[0].value"]
        );
        assert_eq!(failing(&p, json!({"options": [{"id": region.id, "value": []}]})), ["options[0].value"]);
        let both = json!({"options": [{"id": region.id, "value": [region.values[1].id]},
            {"id": addons.id, "value": [addons.values[0].id, addons.values[1].id]}]});
        assert_eq!(run(&p, both).unwrap().options.len(), 2);
        assert_eq!(
            failing(
                &p,
                json!({"options": [{"id": region.id, "value": [region.values[0].id]}, {"id": region.id, "value": [region.values[0].id]}]})
            ),
            ["options[1].id"]
        );
    }

    #[test]
    fn custom_price_keys_name_the_product_its_variants_or_its_option_values() {
        let p = product();
        let ok = json!({"customPrices": {"base": {"priceFixed": 10}, format!("variant_{}", p.variants[0].id): {"pricePerUnit": 1.5},
            format!("option_{}", p.options[1].values[0].id): {"priceSubscription": null}}});
        assert_eq!(run(&p, ok).unwrap().custom_prices.len(), 3);
        let foreign = format!("variant_{}", Uuid::new_v4());
        assert_eq!(failing(&p, json!({"customPrices": {foreign.clone(): {}}})), [format!("customPrices.{foreign}")]);
        let option_as_value = format!("option_{}", p.options[0].id);
        assert_eq!(
            failing(&p, json!({"customPrices": {option_as_value.clone(): {}}})),
            [format!("customPrices.{option_as_value}")]
        );
        assert_eq!(failing(&p, json!({"customPrices": {"extra": {}}})), ["customPrices.extra"]);
        assert_eq!(
            failing(&p, json!({"customPrices": {"base": {"priceFixed": -1}}})),
            ["customPrices.base.priceFixed"]
        );
        assert_eq!(failing(&p, json!({"customPrices": []})), ["customPrices"]);
    }

    #[test]
    fn variant_dates_quantity_and_terms() {
        let p = product();
        assert_eq!(failing(&p, json!({"activeVariantId": Uuid::new_v4()})), ["activeVariantId"]);
        assert!(run(&p, json!({"activeVariantId": p.variants[0].id})).is_ok());
        assert_eq!(failing(&p, json!({"activeFromType": "FixedDate"})), ["activeFromFixedDate"]);
        assert_eq!(failing(&p, json!({"activeFromFixedDate": "2027-01-01"})), ["activeFromFixedDate"]);
        let fixed = run(&p, json!({"activeFromType": "FixedDate", "activeFromFixedDate": "2027-01-01"})).unwrap();
        assert_eq!(fixed.active_from_fixed_date.as_deref(), Some("2027-01-01"));
        assert_eq!(failing(&p, json!({"activeFromType": "Later"})), ["activeFromType"]);
        assert_eq!(failing(&p, json!({"quantity": 0})), ["quantity"]);
        assert_eq!(failing(&p, json!({"priceFrequency": 4})), ["priceFrequency"]);
        assert_eq!(failing(&p, json!({"renewalMode": "Maybe"})), ["renewalMode"]);
        let terms =
            run(&p, json!({"priceFrequency": 12, "contractPeriodMonths": 24, "renewalMode": "Automatic"})).unwrap();
        assert_eq!(
            (terms.price_frequency, terms.contract_period_months, terms.renewal_mode),
            (Some(12), 24, RenewalMode::Automatic)
        );
    }
}
