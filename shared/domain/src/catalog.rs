//! The product catalog: categories (seeded) and products (created by
//! `POST /administration/product-catalog`, read by the project import).

use crate::money;
use crate::project::{self, ProjectScope};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use uuid::Uuid;
use workapi_richtext::Doc;
use workapi_store::entity::{self, Entity, IndexKey};
use workapi_store::keys::WsKeys;
use workapi_store::{Cursor, Index, Key, Query, Store, StoreResult, query_all};
use workapi_wire::order::OrderKey;

/// A catalog category. Seeded (docs/seed.md); the API only reads it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(examples(json!({"id": "7b9d1f3a-5c7e-4a9b-8d1f-3a5c7e9b1d3f", "name": "Hosting"})))]
pub struct CatalogCategory {
    pub id: Uuid,
    pub name: String,
}

impl Entity for CatalogCategory {
    const TYPE: &'static str = "CatalogCategory";
    const PREFIX: &'static str = "PRODCAT#";
    type Scope = WsKeys;

    fn key(&self, keys: WsKeys) -> Key {
        category_key(keys, self.id)
    }
}

pub fn category_key(keys: WsKeys, id: Uuid) -> Key {
    keys.root(format!("{}{id}", CatalogCategory::PREFIX))
}

pub async fn get_category(store: &dyn Store, keys: WsKeys, id: Uuid) -> StoreResult<Option<CatalogCategory>> {
    entity::get(store, &category_key(keys, id)).await
}

/// A category's place in its list: by name, case-insensitively, then id.
pub fn category_order(category: &CatalogCategory) -> OrderKey {
    OrderKey::new().name(&category.name).id(category.id)
}

/// A product's place in its list: by name, case-insensitively, then id.
pub fn product_order(product: &ProductRecord) -> OrderKey {
    OrderKey::new().name(&product.name).id(product.id)
}

/// Every catalog category, ordered by name.
pub async fn list_categories(store: &dyn Store, keys: WsKeys) -> StoreResult<Vec<CatalogCategory>> {
    let items = query_all(store, Query::table(keys.root_pk()).begins_with(CatalogCategory::PREFIX)).await?;
    let mut all = items.into_iter().map(entity::from_item).collect::<StoreResult<Vec<CatalogCategory>>>()?;
    all.sort_by_cached_key(category_order);
    Ok(all)
}

/// How a subscription continues at the end of its contract period.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, utoipa::ToSchema)]
pub enum RenewalMode {
    /// Renews for another period
    #[default]
    Automatic,
    /// Ends
    Stops,
}
workapi_wire::closed_enum!(RenewalMode);

/// Months between two charges of a recurring price: 1, 3, 6 or 12.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PriceFrequency(pub i64);

impl PriceFrequency {
    pub const ALLOWED: [i64; 4] = [1, 3, 6, 12];
}

impl workapi_wire::Field for PriceFrequency {
    fn read(value: &serde_json::Value, at: &workapi_wire::At, errors: &mut workapi_wire::Errors) -> Option<Self> {
        match value.as_i64() {
            Some(n) if Self::ALLOWED.contains(&n) => Some(PriceFrequency(n)),
            _ => {
                errors.add(at, format!("{} must be 1, 3, 6 or 12 (months)", at.name()));
                None
            }
        }
    }

    fn schema() -> workapi_wire::SchemaRef {
        utoipa::openapi::schema::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::Integer)
            .enum_values(Some(Self::ALLOWED))
            .description(Some("Months: 1, 3, 6 or 12"))
            .into()
    }
}

/// Prices of a product or a variant; each absent (null) or an exact amount ≥ 0.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Prices {
    /// One-time price; null or 0 means none
    #[serde(with = "money::option", default)]
    #[schema(value_type = Option<f64>, required)]
    pub price_fixed: Option<Decimal>,
    /// Recurring price per `priceFrequency` months
    #[serde(with = "money::option", default)]
    #[schema(value_type = Option<f64>, required)]
    pub price_subscription: Option<Decimal>,
    /// Price per unit (`priceUnitName`)
    #[serde(with = "money::option", default)]
    #[schema(value_type = Option<f64>, required)]
    pub price_per_unit: Option<Decimal>,
}

/// A choice of an option with its extra prices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OptionValue {
    pub id: Uuid,
    pub name: String,
    #[serde(with = "money::option", default)]
    #[schema(value_type = Option<f64>, required)]
    pub extra_price_fixed: Option<Decimal>,
    #[serde(with = "money::option", default)]
    #[schema(value_type = Option<f64>, required)]
    pub extra_price_per_unit: Option<Decimal>,
    #[serde(with = "money::option", default)]
    #[schema(value_type = Option<f64>, required)]
    pub extra_price_subscription: Option<Decimal>,
}

/// An option of a product: one value (single choice) or several (`isMultiple`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProductOption {
    pub id: Uuid,
    pub name: String,
    /// Several values may be chosen
    pub is_multiple: bool,
    /// An import must choose it
    pub is_required: bool,
    pub values: Vec<OptionValue>,
}

/// A variant as stored: its description as IDoc.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VariantRecord {
    pub id: Uuid,
    pub name: String,
    pub description: Option<Doc>,
    #[serde(flatten)]
    pub prices: Prices,
}

/// What defines a catalog product: everything but its id and creation time. The create body
/// parses into it (`administration::catalog::products::draft`), and the record holds it flat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProductDefinition {
    pub category_id: Uuid,
    pub name: String,
    pub description: Doc,
    #[serde(flatten)]
    pub prices: Prices,
    pub price_unit_name: Option<String>,
    pub price_frequency: Option<i64>,
    pub contract_period_months: Option<i64>,
    pub renewal_mode: Option<RenewalMode>,
    pub variants: Vec<VariantRecord>,
    pub options: Vec<ProductOption>,
    /// An image of the workspace's uploads (`workapi_kit::files`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logo_id: Option<Uuid>,
}

/// A catalog product as stored (spec §2.8): descriptions as IDoc, variants and options inside
/// the item (bounded by the create body's limits). Its definition's fields are read through it
/// (`record.name`), and stored as attributes of the item, not nested.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProductRecord {
    pub id: Uuid,
    #[serde(flatten)]
    pub definition: ProductDefinition,
    pub created_at: String,
}

impl std::ops::Deref for ProductRecord {
    type Target = ProductDefinition;

    fn deref(&self) -> &ProductDefinition {
        &self.definition
    }
}

impl Entity for ProductRecord {
    const TYPE: &'static str = "CatalogProduct";
    const PREFIX: &'static str = "PRODUCT#";
    type Scope = WsKeys;

    fn key(&self, keys: WsKeys) -> Key {
        product_key(keys, self.id)
    }

    /// Listed by category through GSI1, by name.
    fn gsi1(&self, keys: WsKeys) -> Option<IndexKey> {
        Some(IndexKey { pk: category_index(keys, self.category_id), sk: product_order(self).sort_text() })
    }

    /// Listed by name in the list index (the whole catalog).
    fn gsi2(&self, keys: WsKeys) -> Option<IndexKey> {
        Some(IndexKey { pk: products_index(keys), sk: product_order(self).sort_text() })
    }
}

pub fn product_key(keys: WsKeys, id: Uuid) -> Key {
    keys.root(format!("{}{id}", ProductRecord::PREFIX))
}

fn category_index(keys: WsKeys, category_id: Uuid) -> String {
    keys.partition(&format!("{}{category_id}", CatalogCategory::PREFIX))
}

fn products_index(keys: WsKeys) -> String {
    keys.partition("PRODUCTS")
}

pub async fn get_product(store: &dyn Store, keys: WsKeys, id: Uuid) -> StoreResult<Option<ProductRecord>> {
    entity::get(store, &product_key(keys, id)).await
}

/// The catalog's products by name, of one category (GSI1) or all (the list index, GSI2).
pub fn products_query(keys: WsKeys, category_id: Option<Uuid>) -> Query {
    match category_id {
        Some(category) => Query::gsi1(category_index(keys, category)),
        None => Query::gsi2(products_index(keys)),
    }
}

/// Where [`products_query`] continues after a cursor's place (`None`: not a product's place).
pub fn products_start(keys: WsKeys, category_id: Option<Uuid>, after: &OrderKey) -> Option<Cursor> {
    let id = after.last_text()?.parse().ok()?;
    let (index, pk) = match category_id {
        Some(category) => (Index::Gsi1, category_index(keys, category)),
        None => (Index::Gsi2, products_index(keys)),
    };
    Some(entity::index_start(index, &product_key(keys, id), IndexKey { pk, sk: after.sort_text() }))
}

/// A variant as the API returns it: description as HTML (or null).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Variant {
    pub id: Uuid,
    pub name: String,
    #[schema(required)]
    pub description: Option<String>,
    #[serde(flatten)]
    pub prices: Prices,
}

/// A catalog product as the API returns it: descriptions as HTML, generated ids for
/// variants, options and values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(examples(json!({"id": "1e3c5a7b-9d1f-4b3d-8f5a-7c9e1b3d5f7a", "categoryId": "7b9d1f3a-5c7e-4a9b-8d1f-3a5c7e9b1d3f",
    "name": "Managed hosting", "description": "<p>Hosting with <strong>daily backups</strong></p>",
    "priceFixed": 99, "priceSubscription": 49.9, "pricePerUnit": null, "priceUnitName": null,
    "priceFrequency": 1, "contractPeriodMonths": 12, "renewalMode": "Automatic",
    "variants": [{"id": "2f4a6c8e-0b2d-4f6a-8c0e-2b4d6f8a0c2e", "name": "Small", "description": null,
        "priceFixed": null, "priceSubscription": 29.9, "pricePerUnit": null}],
    "options": [{"id": "3a5c7e9b-1d3f-4a5c-9e1b-3d5f7a9c1e3b", "name": "Region", "isMultiple": false, "isRequired": true,
        "values": [{"id": "4b6d8f0a-2c4e-4b6d-8f0a-2c4e6b8d0f2a", "name": "Frankfurt", "extraPriceFixed": null,
            "extraPricePerUnit": null, "extraPriceSubscription": null}]}],
    "logoId": null, "logoUrl": null, "createdAt": "2026-11-24T02:00:00Z"})))]
pub struct CatalogProduct {
    pub id: Uuid,
    pub category_id: Uuid,
    pub name: String,
    /// HTML
    pub description: String,
    #[serde(flatten)]
    pub prices: Prices,
    #[schema(required)]
    pub price_unit_name: Option<String>,
    /// Months: 1, 3, 6 or 12; null for a product without recurring prices
    #[schema(required)]
    pub price_frequency: Option<i64>,
    #[schema(required)]
    pub contract_period_months: Option<i64>,
    #[schema(required)]
    pub renewal_mode: Option<RenewalMode>,
    pub variants: Vec<Variant>,
    pub options: Vec<ProductOption>,
    /// The uploaded image used as logo; null without one
    #[schema(required)]
    pub logo_id: Option<Uuid>,
    /// Where the logo can be fetched: a presigned URL valid for an hour (S3), or the local
    /// server's signed URL; null without a logo
    #[schema(required)]
    pub logo_url: Option<String>,
    #[schema(format = DateTime)]
    pub created_at: String,
}

impl workapi_wire::Compact for CatalogProduct {
    const COMPACT: &'static [&'static str] = &["id", "name", "categoryId"];
}

impl From<&ProductRecord> for CatalogProduct {
    fn from(r: &ProductRecord) -> CatalogProduct {
        CatalogProduct {
            id: r.id,
            category_id: r.category_id,
            name: r.name.clone(),
            description: workapi_richtext::to_html(&r.description),
            prices: r.prices.clone(),
            price_unit_name: r.price_unit_name.clone(),
            price_frequency: r.price_frequency,
            contract_period_months: r.contract_period_months,
            renewal_mode: r.renewal_mode,
            variants: r
                .variants
                .iter()
                .map(|v| Variant {
                    id: v.id,
                    name: v.name.clone(),
                    description: v.description.as_ref().map(workapi_richtext::to_html),
                    prices: v.prices.clone(),
                })
                .collect(),
            options: r.options.clone(),
            logo_id: r.logo_id,
            logo_url: None,
            created_at: r.created_at.clone(),
        }
    }
}

// The catalog products imported into a project (spec §4.4): written by the projects
// function's import, read by billing (invoice lines, `invoice_lines`).

/// When an imported product starts to count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, utoipa::ToSchema)]
pub enum ActiveFromType {
    /// At once
    #[default]
    Immediately,
    /// With the project's billing
    ProjectBilling,
    /// On `activeFromFixedDate`
    FixedDate,
}
workapi_wire::closed_enum!(ActiveFromType);

/// The key of a custom price: the product itself, one of its variants or one of its option
/// values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PriceTarget {
    Base,
    Variant(Uuid),
    OptionValue(Uuid),
}

impl PriceTarget {
    pub fn parse(text: &str) -> Option<PriceTarget> {
        if text == "base" {
            return Some(PriceTarget::Base);
        }
        let uuid = |rest: &str| Uuid::parse_str(rest).ok();
        if let Some(rest) = text.strip_prefix("variant_") {
            return uuid(rest).map(PriceTarget::Variant);
        }
        text.strip_prefix("option_").and_then(uuid).map(PriceTarget::OptionValue)
    }

    pub fn key(self) -> String {
        match self {
            PriceTarget::Base => "base".into(),
            PriceTarget::Variant(id) => format!("variant_{id}"),
            PriceTarget::OptionValue(id) => format!("option_{id}"),
        }
    }
}

/// A chosen option as stored and returned: ids with the names of the copy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChosenOption {
    pub id: Uuid,
    pub name: String,
    /// The chosen value ids
    pub value: Vec<Uuid>,
}

/// A custom price as stored and returned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomPrice {
    /// base, variant_<variantId> or option_<optionValueId>
    pub key: String,
    #[serde(flatten)]
    pub prices: Prices,
}

/// An import, validated against its product; stored flat in its [`ProjectProductRecord`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Import {
    #[serde(with = "money")]
    pub quantity: rust_decimal::Decimal,
    pub options: Vec<ChosenOption>,
    pub custom_prices: Vec<CustomPrice>,
    pub active_variant_id: Option<Uuid>,
    pub active_from_type: ActiveFromType,
    pub active_from_fixed_date: Option<String>,
    pub contract_period_months: i64,
    pub price_frequency: Option<i64>,
    pub renewal_mode: RenewalMode,
}

/// The stored import: a copy of the catalog product and the import's choices.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectProductRecord {
    pub id: Uuid,
    pub project_id: Uuid,
    /// The catalog product as it was at the import
    pub product: ProductRecord,
    /// The import's choices, flat beside the product
    #[serde(flatten)]
    pub import: Import,
    pub created_at: String,
    pub created_by: Uuid,
}

project::project_entity!(ProjectProductRecord, "ProjectProduct", "PPRODUCT#");

/// A project's imported products as stored (one query of the project's partition), unordered.
pub async fn project_products(store: &dyn Store, scope: ProjectScope) -> StoreResult<Vec<ProjectProductRecord>> {
    project::items(store, scope).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The record's item keeps the definition's fields (and the prices') as its own
    /// attributes: the layout items were written in before the definition was a struct.
    #[test]
    fn a_product_s_item_is_flat_and_reads_back() {
        let record = ProductRecord {
            id: Uuid::new_v4(),
            definition: ProductDefinition {
                category_id: Uuid::new_v4(),
                name: "Hosting".into(),
                description: Doc::empty(),
                prices: Prices { price_fixed: Some(Decimal::new(9990, 2)), ..Prices::default() },
                price_unit_name: None,
                price_frequency: None,
                contract_period_months: None,
                renewal_mode: None,
                variants: vec![],
                options: vec![],
                logo_id: None,
            },
            created_at: "2026-11-24T06:00:00.000Z".into(),
        };
        let item = entity::to_item(&record, WsKeys::new(Uuid::nil())).unwrap();
        assert_eq!((item["name"].clone(), item["priceFixed"].clone()), (json!("Hosting"), json!(99.9)));
        assert!(item.get("definition").is_none() && item.get("prices").is_none() && item.get("logoId").is_none());
        // By name in the category's index and in the whole catalog's.
        let place = format!("hosting\u{1}{}", record.id);
        assert_eq!((&item["GSI1SK"], &item["GSI2SK"]), (&json!(place), &json!(place)));
        assert_eq!(item["GSI2PK"], json!(format!("WS#{}#PRODUCTS", Uuid::nil())));
        let back: ProductRecord = entity::from_item(item).unwrap();
        assert_eq!((back, record.name.as_str()), (record.clone(), "Hosting"));
    }
}
