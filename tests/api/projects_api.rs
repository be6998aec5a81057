//! Seed files, projects, contacts, manual positions and the product catalog over HTTP with real
//! tokens (spec §2.4, §2.8, §4.4, §4.5; docs/projects.md, docs/seed.md), on every store backend.

use api_tests::{TestApi, assert_error_body, each_backend};
use serde_json::{Value, json};
use std::collections::HashSet;
use uuid::Uuid;
use workapi_domain::identity::{self, UserKind};
use workapi_domain::permissions::{GUEST, ROOT, STAFF, TEAM_LEADER};

/// The ids of one seeded world.
pub(crate) struct World {
    pub(crate) org: Uuid,
    pub(crate) active: Uuid,
    pub(crate) inactive: Uuid,
    pub(crate) shared_project: Uuid,
    pub(crate) other_project: Uuid,
    pub(crate) category: Uuid,
    pub(crate) other_category: Uuid,
    pub(crate) catalog_category: Uuid,
    pub(crate) product: Uuid,
}

fn seed_json(w: &World, members: &[Uuid]) -> Value {
    let tag = &Uuid::new_v4().simple().to_string()[..8];
    json!({
        "version": 1,
        "organizations": [{"id": w.org, "name": "Acme"}],
        "contacts": [
            {"id": w.active, "organizationId": w.org, "name": "Active Contact", "email": format!("a-{tag}@acme.example")},
            {"id": w.inactive, "organizationId": w.org, "name": "Inactive Contact", "email": format!("i-{tag}@acme.example"),
             "isActive": false, "language": "de"}
        ],
        "catalogCategories": [{"id": w.catalog_category, "name": "Hosting"}],
        "projects": [
            {"id": w.shared_project, "name": "Alpha", "customerOrganizationId": w.org, "members": members,
             "hourRate": 95.5, "currency": "EUR", "taxRate": 19, "expressQuotationsEnabled": true,
             "manualPositionCategories": [{"id": w.category, "name": "Licences"}]},
            {"id": w.other_project, "name": "Beta", "customerOrganizationId": null, "members": [],
             "hourRate": 80, "currency": "CHF", "taxRate": 7.7,
             "manualPositionCategories": [{"id": w.other_category, "name": "Hardware"}]}
        ],
        "catalogProducts": [{
            "id": w.product, "name": "Managed hosting", "categoryId": w.catalog_category, "description": "**Fast**",
            "priceSubscription": 29.9, "priceFrequency": 1,
            "variants": [{"name": "Small", "description": null}, {"name": "Large", "description": "<p>Big</p>"}],
            "options": [{"name": "Region", "isMultiple": false, "isRequired": true,
                         "values": [{"name": "Frankfurt"}, {"name": "Dublin", "extraPriceSubscription": 5}]}]
        }]
    })
}

fn new_world() -> World {
    World {
        org: Uuid::new_v4(),
        active: Uuid::new_v4(),
        inactive: Uuid::new_v4(),
        shared_project: Uuid::new_v4(),
        other_project: Uuid::new_v4(),
        category: Uuid::new_v4(),
        other_category: Uuid::new_v4(),
        catalog_category: Uuid::new_v4(),
        product: Uuid::new_v4(),
    }
}

async fn load(api: &TestApi, workspace: Uuid, seed: &Value) -> Result<local::seed::Report, String> {
    let file = local::seed::parse(&seed.to_string()).map_err(|e| e.to_string())?;
    local::seed::load(api.store.as_ref(), workspace, &file).await.map_err(|e| e.to_string())
}

/// A seeded world whose first project has the active contact and `member` as its members.
pub(crate) async fn seeded(api: &TestApi, member: Option<Uuid>) -> World {
    let world = new_world();
    let members: Vec<Uuid> = std::iter::once(world.active).chain(member).collect();
    load(api, api.workspace_id, &seed_json(&world, &members)).await.expect("seed loads");
    world
}

#[tokio::test]
async fn a_seed_loads_idempotently_and_refuses_bad_references_naming_the_entry() {
    each_backend(async |_, api| {
        let world = new_world();
        let seed = seed_json(&world, &[]);
        let first = load(api, api.workspace_id, &seed).await.unwrap();
        assert_eq!(first.written(), 7, "[{}] {first}", api.backend);
        let second = load(api, api.workspace_id, &seed).await.unwrap();
        assert_eq!(second.written(), 0, "[{}] loading twice changes nothing: {second}", api.backend);

        // A changed entry is written again, the rest stays.
        let mut changed = seed.clone();
        changed["projects"][1]["name"] = json!("Beta 2");
        let third = load(api, api.workspace_id, &changed).await.unwrap();
        assert_eq!(third.written(), 1, "[{}] {third}", api.backend);

        let mut bad = seed_json(&new_world(), &[Uuid::new_v4()]);
        bad["projects"][1]["customerOrganizationId"] = json!(Uuid::new_v4());
        bad["projects"][1]["hourRate"] = json!(-1);
        bad["contacts"][1]["organizationId"] = json!(Uuid::new_v4());
        bad["catalogProducts"][0]["priceFrequency"] = json!(2);
        let error = load(api, api.workspace_id, &bad).await.unwrap_err();
        for expected in [
            "projects[1].customerOrganizationId: no such organization",
            "projects[0].members[0]: no such user",
            "projects[1].hourRate: must be from 0",
            "contacts[1].organizationId: no such organization",
            "catalogProducts[0].priceFrequency:",
        ] {
            assert!(error.contains(expected), "[{}] {expected:?} in {error}", api.backend);
        }
        let mut taken = seed_json(&new_world(), &[]);
        let (someone, _) = api.user(STAFF, UserKind::Employee).await;
        taken["contacts"][0]["email"] = json!(someone.email.to_uppercase());
        let error = load(api, api.workspace_id, &taken).await.unwrap_err();
        assert!(error.contains("contacts[0].email:") && error.contains("another user"), "[{}] {error}", api.backend);
        let unknown = load(api, api.workspace_id, &json!({"version": 1, "projekts": []})).await.unwrap_err();
        assert!(unknown.contains("projekts"), "{unknown}");
        // Nothing of the refused file was written.
        let (_, token) = api.user(ROOT, UserKind::Employee).await;
        let (_, projects) = api.get("/projects", &token).await;
        assert_eq!(projects.as_array().unwrap().len(), 2, "[{}] {projects}", api.backend);
    })
    .await;
}

#[tokio::test]
async fn projects_are_visible_to_members_and_to_holders_of_view_all() {
    each_backend(async |_, api| {
        let (member, member_token) = api.user(TEAM_LEADER, UserKind::Employee).await;
        let world = seeded(api, Some(member.id)).await;
        let (_, outsider) = api.user(TEAM_LEADER, UserKind::Employee).await;
        let (_, root) = api.user(ROOT, UserKind::Employee).await;

        let (status, list) = api.get("/projects", &member_token).await;
        assert_eq!(status, 200);
        let names: Vec<&str> = list.as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["Alpha"], "[{}] a member sees their projects only", api.backend);
        let (_, all) = api.get("/projects", &root).await;
        assert_eq!(all.as_array().unwrap().len(), 2, "[{}] Projects.viewAll sees every project", api.backend);
        let (_, none) = api.get("/projects", &outsider).await;
        assert_eq!(none, json!([]));

        let (status, project) = api.get(&format!("/projects/{}", world.shared_project), &member_token).await;
        assert_eq!(status, 200, "{project}");
        assert_eq!(
            project,
            json!({"id": world.shared_project, "name": "Alpha", "customerOrganizationId": world.org,
                   "expressQuotationsEnabled": true, "hourRate": 95.5, "currency": "EUR", "taxRate": 19})
        );
        let (_, beta) = api.get(&format!("/projects/{}", world.other_project), &root).await;
        assert_eq!((beta["taxRate"].clone(), beta["customerOrganizationId"].clone()), (json!(7.7), Value::Null));

        let (status, body) = api.get(&format!("/projects/{}", world.shared_project), &outsider).await;
        assert_error_body(api.backend, status, &body, 403);
        let (status, body) = api.get(&format!("/projects/{}", Uuid::new_v4()), &root).await;
        assert_error_body(api.backend, status, &body, 404);
        let (status, body) = api.get("/projects/not-a-uuid", &root).await;
        assert_error_body(api.backend, status, &body, 400);

        let (status, categories) =
            api.get(&format!("/projects/{}/manual-position-categories", world.shared_project), &member_token).await;
        assert_eq!((status, categories), (200, json!([{"id": world.category, "name": "Licences"}])));
        let (status, body) =
            api.get(&format!("/projects/{}/manual-position-categories", world.other_project), &member_token).await;
        assert_error_body(api.backend, status, &body, 403);
    })
    .await;
}

#[tokio::test]
async fn another_workspace_s_projects_products_and_organizations_answer_404() {
    each_backend(async |_, api| {
        let world = seeded(api, None).await;
        let other = identity::create_workspace(api.store.as_ref(), "Other", "en").await.unwrap();
        let (_, foreign) = api.user_in(other.id, ROOT, UserKind::Employee, &["api:read", "api:write"]).await;
        let project = world.shared_project;
        for path in [
            format!("/projects/{project}"),
            format!("/projects/{project}/manual-position-categories"),
            format!("/projects/{project}/manual-positions"),
            format!("/administration/product-catalog/{}", world.product),
            format!("/contacts?organizationId={}", world.org),
        ] {
            let (status, body) = api.get(&path, &foreign).await;
            assert_error_body(api.backend, status, &body, 404);
        }
        let (status, body) = api
            .post(&format!("/projects/{project}/manual-positions"), &foreign, json!({"name": "x", "price": 1}))
            .await;
        assert_error_body(api.backend, status, &body, 404);
        let (_, list) = api.get("/projects", &foreign).await;
        assert_eq!(list, json!([]), "[{}]", api.backend);
        let (_, products) = api.get("/administration/product-catalog", &foreign).await;
        assert_eq!(products, json!([]), "[{}]", api.backend);
    })
    .await;
}

#[tokio::test]
async fn contacts_are_listed_by_organization_active_or_not_for_employees() {
    each_backend(async |_, api| {
        let world = seeded(api, None).await;
        let (_, staff) = api.user(STAFF, UserKind::Employee).await;
        let (status, contacts) = api.get(&format!("/contacts?organizationId={}", world.org), &staff).await;
        assert_eq!(status, 200, "{contacts}");
        let summary: Vec<(Value, Value)> =
            contacts.as_array().unwrap().iter().map(|c| (c["id"].clone(), c["isActive"].clone())).collect();
        assert_eq!(summary, [(json!(world.active), json!(true)), (json!(world.inactive), json!(false))]);
        assert_eq!(contacts[1]["organizationId"], json!(world.org));
        let (_, all) = api.get("/contacts", &staff).await;
        assert!(all.as_array().unwrap().len() >= 2);
        let (status, body) = api.get(&format!("/contacts?organizationId={}", Uuid::new_v4()), &staff).await;
        assert_error_body(api.backend, status, &body, 404);
        let (status, body) = api.get("/contacts?organizationId=nope", &staff).await;
        assert_error_body(api.backend, status, &body, 400);
        assert!(body["errors"]["organizationId"].is_array(), "{body}");
        let (_, customer) = api.user(GUEST, UserKind::OrganizationMember).await;
        let (status, body) = api.get("/contacts", &customer).await;
        assert_error_body(api.backend, status, &body, 403);
    })
    .await;
}

#[tokio::test]
async fn manual_positions_are_validated_appended_and_listed_by_sort() {
    each_backend(async |_, api| {
        let (member, token) = api.user(TEAM_LEADER, UserKind::Employee).await;
        let world = seeded(api, Some(member.id)).await;
        let path = format!("/projects/{}/manual-positions", world.shared_project);

        let (status, created) = api
            .post(
                &format!("{path}?responseShape=full"),
                &token,
                json!({"name": " Domain ", "price": 24.9, "description": "**yearly**", "categoryId": world.category,
                       "discountType": "Percentage", "discountAmount": 10}),
            )
            .await;
        assert_eq!(status, 200, "[{}] {created}", api.backend);
        assert_eq!(created["name"], "Domain");
        assert_eq!(created["price"], json!(24.9));
        assert_eq!(created["description"], "<p><strong>yearly</strong></p>");
        assert_eq!(
            (created["discountType"].clone(), created["discountAmount"].clone()),
            (json!("Percentage"), json!(10))
        );
        assert_eq!(created["categoryId"], json!(world.category));
        let (_, compact) = api.post(&path, &token, json!({"name": "Second", "price": 0})).await;
        assert_eq!(compact.as_object().unwrap().len(), 3, "compact default id, name, sort: {compact}");
        assert_eq!(compact["sort"].as_i64(), created["sort"].as_i64().map(|s| s + 1));

        // Every rule, each naming its field.
        for (body, field) in [
            (json!({"name": "", "price": 1}), "name"),
            (json!({"name": "x", "price": -1}), "price"),
            (json!({"name": "x", "price": 1.234}), "price"),
            (json!({"name": "x"}), "price"),
            (json!({"name": "x", "price": 1, "discountType": "Gift"}), "discountType"),
            (json!({"name": "x", "price": 1, "discountAmount": -5}), "discountAmount"),
            (json!({"name": "x", "price": 1, "discountType": "Percentage", "discountAmount": 101}), "discountAmount"),
            (json!({"name": "x", "price": 1, "categoryId": world.other_category}), "categoryId"),
            (json!({"name": "x", "price": 1, "categoryId": Uuid::new_v4()}), "categoryId"),
        ] {
            let (status, error) = api.post(&path, &token, body.clone()).await;
            assert_error_body(api.backend, status, &error, 400);
            assert!(error["errors"][field].is_array(), "[{}] {body} names {field}: {error}", api.backend);
        }

        let (status, list) = api.get(&path, &token).await;
        assert_eq!(status, 200);
        let names: Vec<&str> = list.as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["Domain", "Second"], "[{}] by sort, nothing invalid stored", api.backend);
    })
    .await;
}

#[tokio::test]
async fn manual_positions_need_the_permission_and_project_access() {
    each_backend(async |_, api| {
        let (member, _) = api.user(TEAM_LEADER, UserKind::Employee).await;
        let world = seeded(api, Some(member.id)).await;
        let path = format!("/projects/{}/manual-positions", world.shared_project);
        let body = json!({"name": "x", "price": 1});
        // Staff lacks Projects.manageManualPositions.
        let (_, staff) = api.user(STAFF, UserKind::Employee).await;
        let (status, error) = api.post(&path, &staff, body.clone()).await;
        assert_error_body(api.backend, status, &error, 403);
        // A team leader holds it but is no member of the project.
        let (_, outsider) = api.user(TEAM_LEADER, UserKind::Employee).await;
        let (status, error) = api.post(&path, &outsider, body.clone()).await;
        assert_error_body(api.backend, status, &error, 403);
        assert!(error["message"].as_str().unwrap().contains("project"), "{error}");
        let (status, error) = api.post(&path, &outsider, json!({"name": ""})).await;
        assert_eq!(status, 403, "[{}] project access before the body: {error}", api.backend);
        let (status, error) = api.get(&path, &outsider).await;
        assert_error_body(api.backend, status, &error, 403);
        let (status, error) =
            api.post(&format!("/projects/{}/manual-positions", Uuid::new_v4()), &outsider, body.clone()).await;
        assert_error_body(api.backend, status, &error, 404);
        // Root holds Projects.viewAll.
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        assert_eq!(api.post(&path, &root, body).await.0, 200);
    })
    .await;
}

#[tokio::test]
async fn twenty_concurrent_manual_position_creates_get_distinct_consecutive_sorts() {
    each_backend(async |_, api| {
        let (member, token) = api.user(TEAM_LEADER, UserKind::Employee).await;
        let world = seeded(api, Some(member.id)).await;
        let path = format!("/projects/{}/manual-positions", world.shared_project);
        let creates = (0..20).map(|i| {
            let (path, token) = (path.clone(), token.clone());
            async move { api.post(&path, &token, json!({"name": format!("P{i}"), "price": i})).await }
        });
        let results = futures::future::join_all(creates).await;
        let mut sorts: Vec<i64> = results
            .iter()
            .map(|(status, body)| {
                assert_eq!(*status, 200, "[{}] {body}", api.backend);
                body["sort"].as_i64().unwrap()
            })
            .collect();
        sorts.sort();
        assert_eq!(sorts, (1..=20).collect::<Vec<_>>(), "[{}]", api.backend);
        let (_, list) = api.get(&path, &token).await;
        let listed: Vec<i64> = list.as_array().unwrap().iter().map(|p| p["sort"].as_i64().unwrap()).collect();
        assert_eq!(listed, (1..=20).collect::<Vec<_>>());
    })
    .await;
}

pub(crate) fn product_body(category: Uuid) -> Value {
    json!({"name": "Support", "categoryId": category, "description": "<p>Hours</p><table><tr><td>a</td></tr></table>",
           "pricePerUnit": 95, "priceUnitName": "hour", "priceFrequency": 3, "priceFixed": 10.5,
           "variants": [{"name": "Standard", "description": null, "id": Uuid::nil()},
                        {"name": "Premium", "description": ":rocket: fast", "pricePerUnit": 120}],
           "options": [{"name": "Channel", "isMultiple": true, "isRequired": false,
                        "values": [{"name": "Phone", "extraPricePerUnit": 5}, {"name": "Mail"}]}]})
}

#[tokio::test]
async fn catalog_products_are_created_with_generated_ids_and_listed_by_category() {
    each_backend(async |_, api| {
        let world = seeded(api, None).await;
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        let (status, categories) = api.get("/administration/product-catalog/categories", &root).await;
        assert_eq!((status, categories), (200, json!([{"id": world.catalog_category, "name": "Hosting"}])));

        let (status, product) = api
            .post("/administration/product-catalog?responseShape=full", &root, product_body(world.catalog_category))
            .await;
        assert_eq!(status, 200, "[{}] {product}", api.backend);
        assert_eq!(product["description"], "<p>Hours</p><table><tbody><tr><td><p>a</p></td></tr></tbody></table>");
        assert_eq!(
            (product["contractPeriodMonths"].clone(), product["renewalMode"].clone()),
            (json!(12), json!("Automatic"))
        );
        assert_eq!((product["priceFixed"].clone(), product["pricePerUnit"].clone()), (json!(10.5), json!(95)));
        let mut ids = HashSet::new();
        for v in product["variants"].as_array().unwrap() {
            ids.insert(v["id"].as_str().unwrap().to_owned());
        }
        for o in product["options"].as_array().unwrap() {
            ids.insert(o["id"].as_str().unwrap().to_owned());
            for v in o["values"].as_array().unwrap() {
                ids.insert(v["id"].as_str().unwrap().to_owned());
            }
        }
        assert_eq!(ids.len(), 5, "[{}] every variant, option and value has its own id: {product}", api.backend);
        assert!(!ids.contains(&Uuid::nil().to_string()));
        assert_eq!(product["variants"][0]["description"], Value::Null);

        let (_, compact) =
            api.post("/administration/product-catalog", &root, product_body(world.catalog_category)).await;
        assert_eq!(compact.as_object().unwrap().len(), 3, "compact: id, name, categoryId: {compact}");

        let (status, listed) =
            api.get(&format!("/administration/product-catalog?categoryId={}", world.catalog_category), &root).await;
        assert_eq!(status, 200);
        let names: Vec<&str> = listed.as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["Managed hosting", "Support", "Support"], "[{}]", api.backend);
        let (_, empty) =
            api.get(&format!("/administration/product-catalog?categoryId={}", Uuid::new_v4()), &root).await;
        assert_eq!(empty, json!([]));
        let (status, got) =
            api.get(&format!("/administration/product-catalog/{}", product["id"].as_str().unwrap()), &root).await;
        assert_eq!((status, &got), (200, &product), "[{}]", api.backend);
        let (status, seeded) = api.get(&format!("/administration/product-catalog/{}", world.product), &root).await;
        assert_eq!((status, seeded["description"].as_str()), (200, Some("<p><strong>Fast</strong></p>")));
        let (status, body) = api.get(&format!("/administration/product-catalog/{}", Uuid::new_v4()), &root).await;
        assert_error_body(api.backend, status, &body, 404);
    })
    .await;
}

#[tokio::test]
async fn catalog_product_rules_name_every_failing_field_and_need_the_permission() {
    each_backend(async |_, api| {
        let world = seeded(api, None).await;
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        let base = product_body(world.catalog_category);
        let with = |changes: Value| {
            let mut body = base.clone();
            for (k, v) in changes.as_object().unwrap() {
                body[k] = v.clone();
            }
            body
        };
        for (body, fields) in [
            (with(json!({"categoryId": Uuid::new_v4()})), vec!["categoryId"]),
            (with(json!({"categoryId": "nope"})), vec!["categoryId"]),
            (with(json!({"name": " "})), vec!["name"]),
            (with(json!({"variants": []})), vec!["variants"]),
            (with(json!({"options": null})), vec!["options"]),
            (
                with(json!({"options": [{"name": "O", "isMultiple": false, "isRequired": true, "values": []}]})),
                vec!["options[0].values"],
            ),
            (with(json!({"priceUnitName": null})), vec!["priceUnitName"]),
            (with(json!({"priceFrequency": null})), vec!["priceFrequency"]),
            (with(json!({"priceFrequency": 5})), vec!["priceFrequency"]),
            (
                with(json!({"pricePerUnit": 0, "variants": [{"name": "S", "description": null}], "options": [],
                         "priceSubscription": 5, "priceFrequency": null})),
                vec!["priceFrequency"],
            ),
            (with(json!({"priceFixed": -1, "renewalMode": "Sometimes"})), vec!["priceFixed", "renewalMode"]),
            (with(json!({"priceFixed": 1.999})), vec!["priceFixed"]),
            (with(json!({"description": null})), vec!["description"]),
        ] {
            let (status, error) = api.post("/administration/product-catalog", &root, body.clone()).await;
            assert_error_body(api.backend, status, &error, 400);
            let named: Vec<&String> = error["errors"].as_object().unwrap().keys().collect();
            assert_eq!(named, fields, "[{}] {body}: {error}", api.backend);
        }
        let (_, team_leader) = api.user(TEAM_LEADER, UserKind::Employee).await;
        let (status, error) = api.post("/administration/product-catalog", &team_leader, base.clone()).await;
        assert_error_body(api.backend, status, &error, 403);
        let (_, listed) = api.get("/administration/product-catalog", &root).await;
        assert_eq!(
            listed.as_array().unwrap().len(),
            1,
            "[{}] only the seeded product: nothing invalid stored",
            api.backend
        );
    })
    .await;
}

#[tokio::test]
async fn a_catalog_product_is_imported_as_an_independent_copy() {
    each_backend(async |_, api| {
        let (member, token) = api.user(TEAM_LEADER, UserKind::Employee).await;
        let world = seeded(api, Some(member.id)).await;
        let (_, catalog) = api.get(&format!("/administration/product-catalog/{}", world.product), &token).await;
        let region = &catalog["options"][0];
        let (region_id, dublin) = (region["id"].clone(), region["values"][1]["id"].clone());
        let variant = catalog["variants"][1]["id"].as_str().unwrap().to_owned();
        let path = format!("/projects/{}/products", world.shared_project);
        let body = json!({"productId": world.product, "quantity": 3,
            "options": [{"id": region_id, "value": [dublin]}],
            "customPrices": {"base": {"priceSubscription": 25}, format!("variant_{variant}"): {"priceSubscription": 80.5},
                             format!("option_{}", dublin.as_str().unwrap()): {"priceSubscription": 0}},
            "activeVariantId": variant, "activeFromType": "FixedDate", "activeFromFixedDate": "2027-01-01",
            "contractPeriodMonths": 24, "renewalMode": "Stops"});
        let (status, created) = api.post(&path, &token, body.clone()).await;
        assert_eq!((status, &created), (201, &json!({"success": true})), "[{}]", api.backend);

        // The catalog product changes afterwards; the project's copy does not.
        let keys = workapi_store::keys::WsKeys::new(api.workspace_id);
        let mut stored = workapi_domain::catalog::get_product(api.store.as_ref(), keys, world.product).await.unwrap().unwrap();
        stored.definition.name = "Renamed in the catalog".into();
        api.store.put(workapi_kit::entity::to_item(&stored, keys).unwrap(), workapi_store::Condition::None).await.unwrap();

        let (status, list) = api.get(&path, &token).await;
        assert_eq!(status, 200, "{list}");
        let imported = &list[0];
        assert_eq!(imported["product"]["name"], "Managed hosting", "[{}] an independent copy", api.backend);
        assert_eq!(imported["productId"], json!(world.product));
        assert_eq!((imported["quantity"].clone(), imported["contractPeriodMonths"].clone()), (json!(3), json!(24)));
        assert_eq!((imported["priceFrequency"].clone(), imported["renewalMode"].clone()), (json!(1), json!("Stops")));
        assert_eq!(imported["activeFromFixedDate"], "2027-01-01");
        assert_eq!(imported["options"], json!([{"id": region_id, "name": "Region", "value": [dublin]}]));
        // The object form the import takes, so a client can send back what it read.
        assert_eq!(imported["customPrices"].as_object().unwrap().len(), 3);
        assert_eq!(imported["customPrices"]["base"], json!({"priceFixed": null, "priceSubscription": 25, "pricePerUnit": null}));

        // The rules that need the product, each naming its field, nothing stored.
        for (changes, field) in [
            (json!({"options": []}), "options"),
            (json!({"options": [{"id": region_id, "value": [dublin, dublin]}]}), "options[0].value"),
            (json!({"options": [{"id": Uuid::new_v4(), "value": [dublin]}]}), "options[0].id"),
            (json!({"customPrices": {format!("option_{}", Uuid::new_v4()): {}}}), "customPrices"),
            (json!({"activeVariantId": Uuid::new_v4()}), "activeVariantId"),
            (json!({"activeFromType": "Immediately"}), "activeFromFixedDate"),
            (json!({"quantity": 0}), "quantity"),
            (json!({"priceFrequency": 2}), "priceFrequency"),
        ] {
            let mut invalid = body.clone();
            for (k, v) in changes.as_object().unwrap() {
                invalid[k] = v.clone();
            }
            let (status, error) = api.post(&path, &token, invalid).await;
            assert_error_body(api.backend, status, &error, 400);
            let named = error["errors"].as_object().unwrap().keys().any(|k| k.starts_with(field));
            assert!(named, "[{}] {changes} names {field}: {error}", api.backend);
        }
        let (status, error) = api.post(&path, &token, json!({"productId": Uuid::new_v4(), "quantity": 1, "options": [], "customPrices": {}})).await;
        assert_error_body(api.backend, status, &error, 404);
        let (_, outsider) = api.user(TEAM_LEADER, UserKind::Employee).await;
        let (status, error) = api.post(&path, &outsider, body.clone()).await;
        assert_error_body(api.backend, status, &error, 403);
        let (_, staff) = api.user(STAFF, UserKind::Employee).await;
        let (status, error) = api.post(&path, &staff, body.clone()).await;
        assert_error_body(api.backend, status, &error, 403);
        let (status, error) = api.post(&format!("/projects/{}/products", Uuid::new_v4()), &token, body).await;
        assert_error_body(api.backend, status, &error, 404);
        let (_, list) = api.get(&path, &token).await;
        assert_eq!(list.as_array().unwrap().len(), 1, "[{}] nothing invalid stored", api.backend);
    })
    .await;
}

/// The store calls each new operation makes beyond authentication and rate limiting, as
/// docs/projects.md lists them ("Store round trips").
#[tokio::test]
async fn each_operation_makes_the_documented_store_round_trips() {
    use reqwest::Method;
    each_backend(async |_, api| {
        let (member, token) = api.user(ROOT, UserKind::Employee).await;
        let world = seeded(api, Some(member.id)).await;
        let project = world.shared_project;
        let count = async |method: Method, path: &str, body: Option<Value>| {
            let (trips, (status, _, response)) = api.round_trips(api.call(method, path, Some(&token), body)).await;
            assert!(status < 300, "[{}] {path}: {response}", api.backend);
            (trips.reads, trips.writes)
        };
        // Warm up (the token's lastUsedAt), then measure authentication and rate limiting: a
        // project get is that plus one read.
        count(Method::GET, "/projects", None).await;
        let (reads, auth_writes) = count(Method::GET, &format!("/projects/{project}"), None).await;
        let auth_reads = reads - 1;
        let own = |(r, w): (usize, usize)| (r - auth_reads, w - auth_writes);

        let mp = format!("/projects/{project}/manual-positions");
        let position = json!({"name": "x", "price": 1, "categoryId": world.category});
        count(Method::POST, &mp, Some(position.clone())).await; // the first create makes the counter
        let cases = [
            (Method::POST, mp.clone(), Some(position), (2, 2)),
            (Method::GET, format!("/projects/{project}/tasks"), None, (2, 0)),
            (Method::GET, mp, None, (2, 0)),
            (Method::GET, "/projects".to_owned(), None, (1, 0)),
            (Method::GET, format!("/projects/{project}/manual-position-categories"), None, (2, 0)),
            (Method::GET, format!("/projects/{project}/products"), None, (2, 0)),
            (Method::GET, "/administration/product-catalog/categories".to_owned(), None, (1, 0)),
            (Method::GET, "/administration/product-catalog".to_owned(), None, (1, 0)),
            (Method::GET, format!("/administration/product-catalog/{}", world.product), None, (1, 0)),
            (
                Method::POST,
                "/administration/product-catalog".to_owned(),
                Some(product_body(world.catalog_category)),
                (1, 1),
            ),
            (Method::GET, format!("/contacts?organizationId={}", world.org), None, (2, 0)),
        ];
        for (method, path, body, expected) in cases {
            assert_eq!(own(count(method.clone(), &path, body).await), expected, "[{}] {method} {path}", api.backend);
        }
        // The import, with the option ids of the seeded product.
        let (_, catalog) = api.get(&format!("/administration/product-catalog/{}", world.product), &token).await;
        let region = &catalog["options"][0];
        let import = json!({"productId": world.product, "quantity": 1, "customPrices": {},
            "options": [{"id": region["id"], "value": [region["values"][0]["id"]]}]});
        let path = format!("/projects/{project}/products");
        assert_eq!(own(count(Method::POST, &path, Some(import)).await), (2, 1), "[{}] import", api.backend);
    })
    .await;
}
