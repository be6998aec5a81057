//! The product catalog (spec §2.8, §4.4; docs/projects.md): categories (seeded, read here) and
//! products. The records live in `workapi_domain::catalog`, because the projects function
//! reads catalog products when it imports one.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use workapi_domain::catalog::{self, CatalogCategory, CatalogProduct, ProductRecord};
use workapi_domain::permissions::Requirement;
use workapi_kit::entity;
use workapi_kit::events::{Event, types};
use workapi_kit::files;
use workapi_kit::idempotency::{Answer, Idempotency};
use workapi_kit::paging::{OrderKey, PageParams, Paged, Paging, StoreList};
use workapi_kit::{ApiResult, AppState, Caller};
use workapi_store::keys::WsKeys;
use workapi_store::limits::MAX_ITEM_BYTES;
use workapi_store::read_all;

/// List catalog categories
///
/// The categories of the workspace's product catalog, ordered by name.
#[utoipa::path(get, path = "/administration/product-catalog/categories", operation_id = "listCatalogCategories",
    tag = "administration",
    params(PageParams),
    responses((status = 200, description = "The catalog categories, by name", body = [CatalogCategory])))]
pub async fn list_categories(
    State(state): State<AppState>,
    caller: Caller,
    paging: Paging,
) -> ApiResult<Paged<CatalogCategory>> {
    caller.authorize(Requirement::Member)?;
    let categories = catalog::list_categories(state.store(), caller.keys()).await?;
    paging.window(categories, catalog::category_order)?.answer()
}

pub mod products;

use products::NewProductBody;
use serde::Deserialize;
use utoipa::IntoParams;
use uuid::Uuid;
use workapi_domain::permissions::key;
use workapi_kit::ApiError;
use workapi_kit::projection::Projection;
use workapi_kit::request::{Body, Path, Query};

/// The response of the [P] product create (named, so the document can reference it).
pub type CatalogProductProjection = workapi_kit::projection::Projected<workapi_domain::catalog::CatalogProduct>;

/// Creating catalog products.
const EDIT_CATALOG: Requirement = Requirement::Permission(key::PRODUCT_CATALOG_EDIT);

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[serde(rename_all = "camelCase")]
pub struct ProductPath {
    /// Catalog product id
    #[param(example = "1e3c5a7b-9d1f-4b3d-8f5a-7c9e1b3d5f7a")]
    product_id: Uuid,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct ProductFilter {
    /// Only the products of this catalog category
    #[param(example = "dd1a60b7-9ef0-440d-a7b7-0812147e4225")]
    category_id: Option<Uuid>,
}

/// Create a catalog product
///
/// Creates a product of the workspace's catalog with its variants and options (spec §2.8):
/// ids of variants, options and values are generated, descriptions (product rich text) are
/// returned as HTML. Needs `ProductCatalog.edit`.
#[utoipa::path(post, path = "/administration/product-catalog", operation_id = "createCatalogProduct",
    tag = "administration", request_body = NewProductBody,
    responses((status = 200, description = "The new product with generated ids", body = CatalogProductProjection)))]
pub async fn create_product(
    State(state): State<AppState>,
    caller: Caller,
    projection: Projection,
    headers: HeaderMap,
    idempotency: Idempotency,
    body: Body<NewProductBody>,
) -> ApiResult<Answer> {
    let permit = caller.authorize(EDIT_CATALOG)?;
    let mut body = body.check(&permit)?;
    let logo = products::check_references(state.store(), caller.keys(), &mut body).await?;
    // The answer first (the logo's URL is presigned, it needs no write), so the product's put
    // records it (the idempotency completion).
    let record = products::new_record(products::draft(body.finish()?));
    let product = with_logo_url(&state, &headers, caller.keys(), &record, logo).await?;
    let answer = idempotency.answer(StatusCode::OK, None, &projection.project(&product)?)?;
    // The event keeps no presigned logo URL: it expires long before the event (docs/events.md).
    let event = Event::new(&caller, types::CATALOG_PRODUCT_CREATED, record.id).op(&CatalogProduct::from(&record))?;
    let answer = answer.with_event(event);
    products::create(state.store(), caller.keys(), &record, answer.completion()).await?;
    Ok(answer)
}

/// The product as returned, with its logo's URL (a fresh presigned URL on every read: they
/// expire). `logo` is the logo's file record when the caller already has it.
async fn with_logo_url(
    state: &AppState,
    headers: &HeaderMap,
    keys: WsKeys,
    record: &ProductRecord,
    logo: Option<files::FileRecord>,
) -> ApiResult<CatalogProduct> {
    let mut product = CatalogProduct::from(record);
    let logo = match (logo, record.logo_id) {
        (Some(logo), _) => Some(logo),
        (None, Some(id)) => files::find_image(state.store(), keys, id).await?,
        (None, None) => None,
    };
    if let Some(logo) = logo {
        product.logo_url = Some(files::file_url(state, headers, &logo).await?.url);
    }
    Ok(product)
}

/// List catalog products
///
/// The products of the catalog, or of one category, ordered by name.
#[utoipa::path(get, path = "/administration/product-catalog", operation_id = "listCatalogProducts",
    tag = "administration", params(ProductFilter, PageParams),
    responses((status = 200, description = "The products, by name", body = [CatalogProduct])))]
pub async fn list_products(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    Query(filter): Query<ProductFilter>,
    paging: Paging,
) -> ApiResult<Paged<CatalogProduct>> {
    caller.authorize(Requirement::Member)?;
    let (keys, category) = (caller.keys(), filter.category_id);
    let list = StoreList {
        query: catalog::products_query(keys, category),
        start_after: |after: &OrderKey| catalog::products_start(keys, category, after),
        key: catalog::product_order,
        largest_item: MAX_ITEM_BYTES,
    };
    let decode = |item| Ok(Some(entity::from_item::<ProductRecord>(item)?));
    let page = paging.window_from_store(state.store(), list, decode).await?;
    let (state, headers) = (&state, &headers);
    // The logos' file records, read concurrently (a page may hold 100 products).
    let products = read_all(page.items.iter().cloned(), |record| async move {
        with_logo_url(state, headers, keys, &record, None).await
    })
    .await?;
    page.rest.answer(products)
}

/// Get a catalog product
///
/// One product of the catalog with its variants and options.
#[utoipa::path(get, path = "/administration/product-catalog/{productId}", operation_id = "getCatalogProduct",
    tag = "administration", params(ProductPath),
    responses((status = 200, description = "The product", body = CatalogProduct)))]
pub async fn get_product(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    Path(path): Path<ProductPath>,
) -> ApiResult<Json<CatalogProduct>> {
    caller.authorize(Requirement::Member)?;
    let record = catalog::get_product(state.store(), caller.keys(), path.product_id)
        .await?
        .ok_or_else(|| ApiError::not_found("Catalog product not found"))?;
    Ok(Json(with_logo_url(&state, &headers, caller.keys(), &record, None).await?))
}
