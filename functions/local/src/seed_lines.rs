//! The invoice lines of a seed file (docs/seed.md): a project's manual positions and the catalog
//! products imported into it, as the API creates them (their bodies parsed by the API's own
//! body types and rules) but with the ids and creation instants the file gives, so a seeded
//! world bills the same lines on every load.

use crate::seed::{SeedFile, SeedResult, report};
use crate::seed_billing::known_project;
use projects::manual_positions::{self, NewManualPositionBody};
use serde::Deserialize;
use std::collections::{HashMap, HashSet};
use uuid::Uuid;
use workapi_domain::catalog::{self, ProductDefinition, ProductRecord, ProjectProductRecord};
use workapi_domain::invoice_lines;
use workapi_domain::position::ManualPositionRecord;
use workapi_kit::entity::{self, Entity};
use workapi_kit::input::{self, Checked};
use workapi_store::keys::WsKeys;
use workapi_store::{Condition, Store, StoreError};

/// What places an entry: its id, its project and when it was created (a position's line is
/// due from that day, an import `Immediately` active). The rest of the entry is the API body.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Placement {
    id: Uuid,
    project_id: Uuid,
    /// ISO 8601 date-time
    created_at: String,
    /// Manual positions: the order in the project; default its place among the file's positions
    /// of the project (1, 2, …)
    #[serde(default)]
    sort: Option<i64>,
}

/// An import to write once its catalog product is stored (the copy is taken then).
#[derive(Debug)]
pub struct ProductImport {
    pub id: Uuid,
    pub project_id: Uuid,
    pub product_id: Uuid,
    pub created_at: String,
    body: serde_json::Value,
}

/// The records a valid file's line sections write.
#[derive(Debug, Default)]
pub struct Lines {
    pub positions: Vec<ManualPositionRecord>,
    pub products: Vec<ProductImport>,
}

fn placement(problems: &mut Vec<String>, at: &str, value: &serde_json::Value) -> Option<Placement> {
    match serde_json::from_value::<Placement>(value.clone()) {
        Ok(p) if invoice_lines::utc_date(&p.created_at).is_none() => {
            problems.push(format!("{at}.createdAt: {:?} is not an ISO 8601 date-time", p.created_at));
            None
        }
        Ok(p) => Some(p),
        Err(e) => {
            problems.push(format!("{at}: {e} (id, projectId and createdAt are required)"));
            None
        }
    }
}

/// Every problem of `manualPositions` and `projectProducts`, each naming its entry, or what
/// they write. `file_products` are the catalog products of the file, not stored yet.
pub async fn validate(
    store: &dyn Store,
    keys: WsKeys,
    file: &SeedFile,
    file_products: &[(Uuid, ProductDefinition)],
    problems: &mut Vec<String>,
) -> SeedResult<Lines> {
    let projects: HashSet<Uuid> = file.projects.iter().map(|p| p.id).collect();
    let file_categories: HashSet<(Uuid, Uuid)> =
        file.projects.iter().flat_map(|p| p.manual_position_categories.iter().map(move |c| (p.id, c.id))).collect();
    let mut known = HashMap::new();
    let mut lines = Lines::default();
    let mut ids = HashSet::new();
    let mut per_project: HashMap<Uuid, i64> = HashMap::new();
    for (i, value) in file.manual_positions.iter().enumerate() {
        let at = format!("manualPositions[{i}]");
        let Some(place) = placement(problems, &at, value) else { continue };
        if !ids.insert(place.id) {
            problems.push(format!("{at}.id: {} appears twice", place.id));
        }
        if !known_project(store, keys, &projects, &mut known, place.project_id).await? {
            problems.push(format!("{at}.projectId: no such project"));
        }
        let place_in_file = per_project.entry(place.project_id).or_default();
        *place_in_file += 1;
        let mut body = match Checked::<NewManualPositionBody>::read(value) {
            Ok(body) => body,
            Err(e) => {
                report(problems, &at, e.into());
                continue;
            }
        };
        // The project's categories: the file's, else the stored ones (the create's own check).
        if let Some(category) = id_field(value, "categoryId")
            && !file_categories.contains(&(place.project_id, category))
        {
            let scope = (keys, place.project_id);
            manual_positions::check_category(store, scope, &mut body).await.map_err(|e| e.message)?;
        }
        let draft = match body.finish() {
            Ok(body) => manual_positions::draft(body),
            Err(e) => {
                report(problems, &at, e.into());
                continue;
            }
        };
        lines.positions.push(manual_positions::record(
            draft,
            manual_positions::Placed {
                id: place.id,
                project_id: place.project_id,
                sort: place.sort.unwrap_or(*place_in_file),
                created_at: place.created_at,
                by: Uuid::nil(),
            },
        ));
    }
    let mut ids = HashSet::new();
    for (i, value) in file.project_products.iter().enumerate() {
        let at = format!("projectProducts[{i}]");
        let Some(place) = placement(problems, &at, value) else { continue };
        if !ids.insert(place.id) {
            problems.push(format!("{at}.id: {} appears twice", place.id));
        }
        if !known_project(store, keys, &projects, &mut known, place.project_id).await? {
            problems.push(format!("{at}.projectId: no such project"));
        }
        let mut body = match Checked::<projects::products::ImportBody>::read(value) {
            Ok(body) => body,
            Err(e) => {
                report(problems, &at, e.into());
                continue;
            }
        };
        let Some(product_id) = id_field(value, "productId") else {
            report(problems, &at, body.finish().err().map(Into::into).unwrap_or_else(missing_product));
            continue;
        };
        // A product of the file is checked against its definition: the ids of its variants and
        // option values are drawn when it is created, so an import of it cannot name them.
        let product = match file_products.iter().find(|(id, _)| *id == product_id) {
            Some((id, definition)) => {
                Some(ProductRecord { id: *id, definition: definition.clone(), created_at: String::new() })
            }
            None => catalog::get_product(store, keys, product_id).await?,
        };
        let Some(product) = product else {
            problems.push(format!("{at}.productId: no such catalog product"));
            continue;
        };
        projects::products::check_against(&product, &mut body);
        if let Err(e) = body.finish() {
            report(problems, &at, e.into());
            continue;
        }
        lines.products.push(ProductImport {
            id: place.id,
            project_id: place.project_id,
            product_id,
            created_at: place.created_at,
            body: value.clone(),
        });
    }
    Ok(lines)
}

/// A UUID field of an entry as the body reads it (None when absent or malformed: the body's
/// own parse names it).
fn id_field(value: &serde_json::Value, name: &str) -> Option<Uuid> {
    value.get(name)?.as_str().and_then(|text| Uuid::parse_str(text).ok())
}

fn missing_product() -> workapi_kit::ApiError {
    workapi_kit::ApiError::field("productId", "productId is required")
}

/// Writes a position unless stored so (the file is the truth for what it names).
pub async fn write_position(store: &dyn Store, keys: WsKeys, record: &ManualPositionRecord) -> SeedResult<bool> {
    let stored: Option<ManualPositionRecord> = entity::get(store, &record.key(keys)).await?;
    if stored.as_ref() == Some(record) {
        return Ok(false);
    }
    store.put(entity::to_item(record, keys)?, Condition::None).await?;
    Ok(true)
}

/// Imports the product once, as the API does: a copy of the catalog product as stored now,
/// the body checked against it again. An import whose id exists is left as it is (its copy is
/// the catalog as it was when imported, spec §4.4).
pub async fn write_product(store: &dyn Store, keys: WsKeys, import: &ProductImport) -> SeedResult<bool> {
    let product = catalog::get_product(store, keys, import.product_id)
        .await?
        .ok_or_else(|| format!("projectProducts {}: catalog product {} is not stored", import.id, import.product_id))?;
    let refused = |e: input::Invalid| format!("projectProducts {}: {:?}", import.id, e.errors);
    let mut body = Checked::<projects::products::ImportBody>::read(&import.body).map_err(refused)?;
    projects::products::check_against(&product, &mut body);
    let body = body.finish().map_err(refused)?;
    let record = ProjectProductRecord {
        id: import.id,
        project_id: import.project_id,
        import: projects::products::import_of(body, &product),
        product,
        created_at: import.created_at.clone(),
        created_by: Uuid::nil(),
    };
    match store.put(entity::to_item(&record, keys)?, Condition::NotExists).await {
        Ok(()) => Ok(true),
        Err(StoreError::ConditionFailed) => Ok(false),
        Err(e) => Err(e.into()),
    }
}
