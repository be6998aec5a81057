//! Manual positions: billable items added to a project by hand (spec §2.4, §4.5). Appended at
//! the end of the project's planning: `sort` comes from the project's atomic counter
//! (`entity::append_at_end`), so concurrent creates get distinct consecutive values.

use crate::ProjectPath;
use axum::extract::State;
use axum::http::StatusCode;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use uuid::Uuid;
use workapi_domain::money;
use workapi_domain::permissions::{Requirement, key};
use workapi_domain::position;
/// The stored position and its discount type live in the domain floor (billing reads them).
pub use workapi_domain::position::{DiscountType, ManualPositionRecord};
use workapi_domain::project::{self, ProjectScope};
use workapi_kit::entity;
use workapi_kit::events::{Event, types};
use workapi_kit::idempotency::{Answer, Idempotency};
use workapi_kit::input::{self, At, Checked, EditorText, Errors, Input, Patch, Text};
use workapi_kit::paging::{OrderKey, PageParams, Paged, Paging};
use workapi_kit::projection::Projection;
use workapi_kit::request::{Body, Path};
use workapi_kit::{ApiResult, AppState, Caller};
use workapi_richtext::{self as richtext, Doc};
use workapi_store::clock;
use workapi_store::{Key, Store};

pub const MAX_NAME_CHARS: usize = 200;
/// Largest price and fixed discount: a billion in the workspace currency.
pub const MAX_AMOUNT: i64 = 1_000_000_000;

const MANAGE: Requirement = Requirement::Permission(key::PROJECTS_MANAGE_MANUAL_POSITIONS);

/// A manual position as the API returns it (spec §2.4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(examples(json!({"id": "9f8e7d6c-5b4a-4c3d-8e2f-1a0b9c8d7e6f", "name": "Domain registration",
    "description": "<p>Yearly fee</p>", "price": 24.9, "categoryId": "99c34228-5cee-483d-bfa0-59a61cefd59a",
    "discountType": "Fixed", "discountAmount": 0, "sort": 3, "createdAt": "2026-11-24T02:00:00Z"})))]
pub struct ManualPosition {
    pub id: Uuid,
    pub name: String,
    /// HTML; an empty description is an empty paragraph
    pub description: String,
    /// Net price in the workspace currency
    #[serde(with = "money")]
    #[schema(value_type = f64, minimum = 0)]
    pub price: Decimal,
    #[schema(required)]
    pub category_id: Option<Uuid>,
    pub discount_type: DiscountType,
    /// 0 means no discount
    #[serde(with = "money")]
    #[schema(value_type = f64, minimum = 0)]
    pub discount_amount: Decimal,
    /// Lower numbers first
    pub sort: i64,
    #[schema(format = DateTime)]
    pub created_at: String,
}

impl workapi_kit::projection::Compact for ManualPosition {
    const COMPACT: &'static [&'static str] = &["id", "name", "sort"];
}

/// The response of the [P] manual-position create (named, so the document can reference it).
pub type ManualPositionProjection = workapi_kit::projection::Projected<ManualPosition>;

impl From<&ManualPositionRecord> for ManualPosition {
    fn from(record: &ManualPositionRecord) -> ManualPosition {
        ManualPosition {
            id: record.id,
            name: record.name.clone(),
            description: richtext::to_html(&record.description),
            price: record.price,
            category_id: record.category_id,
            discount_type: record.discount_type,
            discount_amount: record.discount_amount,
            sort: record.sort,
            created_at: record.created_at.clone(),
        }
    }
}

/// The counter behind a project's manual-position order.
fn sort_counter(scope: ProjectScope) -> Key {
    project::project_item(scope, format!("{}MPOS", entity::SEQUENCE.prefix))
}

/// A new manual position (spec §4.5).
#[derive(Input)]
#[input(rules = position_rules)]
#[input(example = serde_json::json!({"name": "Domain registration", "price": 24.9,
    "description": "<p>Yearly fee</p>", "categoryId": "99c34228-5cee-483d-bfa0-59a61cefd59a",
    "discountType": "Percentage", "discountAmount": 10}))]
pub struct NewManualPositionBody {
    name: Text<1, MAX_NAME_CHARS>,
    /// Net price, at least 0, at most two decimal places
    price: input::Decimal<0, MAX_AMOUNT, 2>,
    /// May be empty
    description: Option<EditorText>,
    /// A manual-position category of this project, or null
    category_id: Patch<Uuid>,
    /// Default Fixed
    discount_type: Option<DiscountType>,
    /// At least 0, at most 100 for Percentage; default 0
    discount_amount: Option<input::Decimal<0, MAX_AMOUNT, 2>>,
}

/// What a create stores, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct Draft {
    pub name: String,
    pub price: Decimal,
    pub description: Doc,
    pub category_id: Option<Uuid>,
    pub discount_type: DiscountType,
    pub discount_amount: Decimal,
}

/// The rule a body's fields cannot check alone: a percentage is at most 100 (skipped when
/// `discountType` or `discountAmount` failed to parse).
fn position_rules(body: &NewManualPositionBodyFields, _at: &At, errors: &mut Errors) {
    if let (Some(discount_type), Some(amount)) = (&body.discount_type, &body.discount_amount)
        && let Err(message) = check_discount(discount_type.unwrap_or_default(), amount.map_or(Decimal::ZERO, |d| d.0))
    {
        errors.fail("discountAmount", message);
    }
}

/// What a valid body stores, defaults applied.
pub fn draft(body: NewManualPositionBody) -> Draft {
    let discount_type = body.discount_type.unwrap_or_default();
    let discount_amount = body.discount_amount.map(|d| d.0).unwrap_or(Decimal::ZERO);
    Draft {
        name: body.name.into_string(),
        price: body.price.0,
        description: body.description.map(EditorText::into_doc).unwrap_or_else(Doc::empty),
        category_id: body.category_id.into_option(),
        discount_type,
        discount_amount,
    }
}

/// A discount is never negative, and a percentage is at most 100.
pub fn check_discount(discount_type: DiscountType, amount: Decimal) -> Result<(), String> {
    if amount < Decimal::ZERO {
        Err("discountAmount must be at least 0".into())
    } else if discount_type == DiscountType::Percentage && amount > Decimal::ONE_HUNDRED {
        Err("discountAmount must be at most 100 for a Percentage discount".into())
    } else {
        Ok(())
    }
}

/// A position's place in the project's list: by `sort`, then id.
pub fn order(position: &ManualPosition) -> OrderKey {
    OrderKey::new().int(position.sort).id(position.id)
}

/// A project's manual positions, by `sort`.
pub async fn list(store: &dyn Store, scope: ProjectScope) -> ApiResult<Vec<ManualPosition>> {
    let mut all: Vec<ManualPosition> = position::list(store, scope).await?.iter().map(ManualPosition::from).collect();
    all.sort_by_cached_key(order);
    Ok(all)
}

/// The rule that needs the store, on a body read field by field: the category must be one of
/// the project's (`categoryId`).
pub async fn check_category(
    store: &dyn Store,
    scope: ProjectScope,
    body: &mut Checked<NewManualPositionBody>,
) -> ApiResult<()> {
    if let Some(Patch::Value(category)) = body.fields.category_id
        && project::get_category(store, scope, category).await?.is_none()
    {
        body.fail("categoryId", "categoryId: no such manual-position category in this project");
    }
    Ok(())
}

/// Where a position stands: its id, project, order, creation and creator.
pub struct Placed {
    pub id: Uuid,
    pub project_id: Uuid,
    pub sort: i64,
    pub created_at: String,
    pub by: Uuid,
}

/// The stored position of a draft placed (the create's, and the seed's with the file's ids).
pub fn record(draft: Draft, placed: Placed) -> ManualPositionRecord {
    ManualPositionRecord {
        id: placed.id,
        project_id: placed.project_id,
        name: draft.name,
        description: draft.description,
        price: draft.price,
        category_id: draft.category_id,
        discount_type: draft.discount_type,
        discount_amount: draft.discount_amount,
        sort: placed.sort,
        created_at: placed.created_at,
        created_by: placed.by,
    }
}

/// Appends a position, whose category was checked, at the end of the project's planning.
/// `respond` turns the position into the answer, which the position's put records (the
/// idempotency completion; the sort counter's increment before it is an allocator, as ever).
pub async fn create(
    store: &dyn Store,
    scope: ProjectScope,
    draft: Draft,
    by: Uuid,
    respond: impl FnOnce(&ManualPosition) -> ApiResult<Answer>,
) -> ApiResult<Answer> {
    let last = async { Ok(list(store, scope).await?.iter().map(|p| p.sort).max().unwrap_or(0)) };
    let sort = entity::append_at_end(store, &sort_counter(scope), last).await?;
    let record =
        record(draft, Placed { id: Uuid::new_v4(), project_id: scope.1, sort, created_at: clock::now_rfc3339(), by });
    let answer = respond(&ManualPosition::from(&record))?;
    entity::create(store, &record, scope.0, "Manual position exists", answer.completion()).await?;
    Ok(answer)
}

/// List manual positions
///
/// The project's manual positions, by `sort` (lower first).
#[utoipa::path(get, path = "/projects/{projectId}/manual-positions", operation_id = "listManualPositions",
    tag = "projects", params(ProjectPath, PageParams),
    responses((status = 200, description = "The project's manual positions, by sort", body = [ManualPosition])))]
pub async fn list_manual_positions(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<ProjectPath>,
    paging: Paging,
) -> ApiResult<Paged<ManualPosition>> {
    caller.authorize(Requirement::Member)?;
    let record = project::accessible(state.store(), caller.viewer(), path.project_id).await?;
    paging.window(list(state.store(), (caller.keys(), record.project.id)).await?, order)?.answer()
}

/// Create a manual position
///
/// Appends a billable position at the end of the project's planning (`sort` is assigned);
/// it then appears in quotes and invoices. Needs `Projects.manageManualPositions` and access
/// to the project.
#[utoipa::path(post, path = "/projects/{projectId}/manual-positions", operation_id = "createManualPosition",
    tag = "projects", params(ProjectPath), request_body = NewManualPositionBody,
    responses((status = 200, description = "The new manual position, sorted last", body = ManualPositionProjection)))]
pub async fn create_manual_position(
    State(state): State<AppState>,
    caller: Caller,
    projection: Projection,
    Path(path): Path<ProjectPath>,
    idempotency: Idempotency,
    body: Body<NewManualPositionBody>,
) -> ApiResult<Answer> {
    let permit = caller.authorize(MANAGE)?;
    let record = project::accessible(state.store(), caller.viewer(), path.project_id).await?;
    let scope = (caller.keys(), record.project.id);
    let mut body = body.check(&permit)?;
    check_category(state.store(), scope, &mut body).await?;
    let respond = |position: &ManualPosition| {
        let answer = idempotency.answer_resource(StatusCode::OK, position, &projection.project(position)?)?;
        let event = Event::new(&caller, types::MANUAL_POSITION_CREATED, position.id).in_project(scope.1);
        Ok(answer.with_event(event.op(position)?))
    };
    create(state.store(), scope, draft(body.finish()?), caller.user.id, respond).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: serde_json::Value) -> ApiResult<Draft> {
        workapi_kit::input::parse::<NewManualPositionBody>(&v).map(draft)
    }

    fn failing(v: serde_json::Value) -> Vec<String> {
        parse(v).unwrap_err().errors.unwrap().into_keys().collect()
    }

    #[test]
    fn defaults_fill_the_optional_fields() {
        let d = parse(json!({"name": " Setup ", "price": 0})).unwrap();
        assert_eq!(d.name, "Setup");
        assert_eq!((d.discount_type, d.discount_amount, d.category_id), (DiscountType::Fixed, Decimal::ZERO, None));
        assert_eq!(d.description, Doc::empty());
        let d = parse(json!({"name": "x", "price": 19.99, "categoryId": null, "description": ""})).unwrap();
        assert_eq!(d.price, Decimal::new(1999, 2));
    }

    #[test]
    fn every_field_rule_names_its_field() {
        assert_eq!(failing(json!({"name": "  ", "price": 1})), ["name"]);
        assert_eq!(failing(json!({"name": "x"})), ["price"]);
        assert_eq!(failing(json!({"name": "x", "price": -0.01})), ["price"]);
        assert_eq!(failing(json!({"name": "x", "price": 1.001})), ["price"]);
        assert_eq!(failing(json!({"name": "x", "price": 1, "categoryId": "nope"})), ["categoryId"]);
        assert_eq!(failing(json!({"name": "x", "price": 1, "discountType": "Gift"})), ["discountType"]);
        assert_eq!(failing(json!({"name": "x", "price": 1, "discountAmount": -1})), ["discountAmount"]);
        assert_eq!(failing(json!({"name": "x", "price": 1, "description": 5})), ["description"]);
    }

    #[test]
    fn a_percentage_discount_is_at_most_100() {
        assert!(check_discount(DiscountType::Percentage, Decimal::ONE_HUNDRED).is_ok());
        assert!(check_discount(DiscountType::Percentage, Decimal::new(10001, 2)).is_err());
        assert!(check_discount(DiscountType::Fixed, Decimal::from(500)).is_ok());
        assert_eq!(
            failing(json!({"name": "x", "price": 1, "discountType": "Percentage", "discountAmount": 100.5})),
            ["discountAmount"]
        );
    }

    #[test]
    fn descriptions_are_editor_rich_text_rendered_as_html() {
        let d = parse(json!({"name": "x", "price": 1, "description": "**bold** text"})).unwrap();
        assert_eq!(richtext::to_html(&d.description), "<p><strong>bold</strong> text</p>");
        // Tables belong to the product profile only.
        let table = parse(json!({"name": "x", "price": 1, "description": "<table><tr><td>a</td></tr></table>"}));
        assert!(table.is_ok_and(|d| !richtext::to_html(&d.description).contains("<table")));
    }
}
