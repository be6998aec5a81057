//! One check order on every protected write (docs/conventions.md): authentication →
//! projection parameters → path → permission → body. Walks the generated document, so every
//! new operation is covered without new test code.

use api_tests::{TestApi, backends};
use serde_json::Value;
use workapi_domain::identity::UserKind;
use workapi_domain::permissions::GUEST;

/// Writes a guest (organization member) may make, refused or not by the resource itself: a
/// contact decides on the quotations addressed to them (docs/tasks.md), and anyone reads their
/// own notifications. They take no body.
const GUEST_DECIDES: &[&str] = &[
    "POST /tasks/{identifier}/express-quotations/{expressQuotationId}/accept",
    "POST /tasks/{identifier}/express-quotations/{expressQuotationId}/reject",
    // Every user marks their own notifications read (docs/account.md); the example is not theirs.
    "POST /account/notifications/{id}/read",
];

/// A value no path parameter of the API accepts (not a UUID, a tag type, a role id or a
/// permission key).
const MALFORMED: &str = "not-valid";

struct Operation {
    method: reqwest::Method,
    template: String,
    /// Path parameter names with their documented examples.
    path_params: Vec<(String, String)>,
    projected: bool,
}

/// Every write operation that needs a bearer credential.
fn protected_writes() -> Vec<Operation> {
    let doc = serde_json::to_value(registry::document()).unwrap();
    let mut found = Vec::new();
    for (template, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            if !["post", "put", "patch", "delete"].contains(&method.as_str()) {
                continue;
            }
            let bearer = operation["security"].as_array().is_some_and(|s| s.iter().any(|r| r.get("bearer").is_some()));
            if !bearer {
                continue;
            }
            let parameters = operation["parameters"].as_array().cloned().unwrap_or_default();
            let path_params = parameters
                .iter()
                .filter(|p| p["in"] == "path")
                .map(|p| {
                    let name = p["name"].as_str().unwrap().to_owned();
                    let example = p["example"].as_str().or_else(|| p["schema"]["examples"][0].as_str());
                    let example =
                        example.unwrap_or_else(|| panic!("{method} {template}: path parameter {name} has no example"));
                    (name, example.to_owned())
                })
                .collect();
            found.push(Operation {
                method: reqwest::Method::from_bytes(method.to_uppercase().as_bytes()).unwrap(),
                template: template.clone(),
                path_params,
                projected: parameters.iter().any(|p| p["name"] == "responseShape"),
            });
        }
    }
    found
}

fn fill(template: &str, params: &[(String, String)], malformed: Option<&str>) -> String {
    let mut path = template.to_owned();
    for (name, example) in params {
        let value = if malformed == Some(name.as_str()) { MALFORMED } else { example.as_str() };
        path = path.replace(&format!("{{{name}}}"), value);
    }
    path
}

#[tokio::test]
async fn every_protected_write_checks_projection_then_path_then_permission_then_body() {
    let backend = backends().await.into_iter().next().unwrap();
    let api = TestApi::start(&backend).await;
    // A guest organization member: no permission, not an employee.
    let (_, token) = api.user(GUEST, UserKind::OrganizationMember).await;
    let invalid_body = Some(serde_json::json!({"name": 42, "color": "plaid", "allow": "maybe", "type": 7}));
    let operations = protected_writes();
    assert!(operations.len() >= 10, "the walk found too few operations: {}", operations.len());
    let mut checked_projection = 0;
    for op in &operations {
        let what = format!("{} {}", op.method, op.template);
        let first_param = op.path_params.first().map(|(name, _)| name.as_str());
        if op.projected {
            // An invalid responseShape wins over a malformed path and the missing permission.
            let path = format!("{}?responseShape=tiny", fill(&op.template, &op.path_params, first_param));
            let (status, _, body) = api.call(op.method.clone(), &path, Some(&token), invalid_body.clone()).await;
            assert_eq!(status, 400, "{what}: invalid responseShape → 400, got {body}");
            assert!(body["errors"]["responseShape"].is_array(), "{what}: {body}");
            checked_projection += 1;
        }
        for (name, _) in &op.path_params {
            let path = fill(&op.template, &op.path_params, Some(name));
            let (status, _, body) = api.call(op.method.clone(), &path, Some(&token), invalid_body.clone()).await;
            assert_eq!(status, 400, "{what}: malformed {name} → 400 before the permission, got {body}");
            assert!(body["errors"][name.as_str()].is_array(), "{what}: the 400 names {name}: {body}");
        }
        let path = fill(&op.template, &op.path_params, None);
        let (status, _, body) = api.call(op.method.clone(), &path, Some(&token), invalid_body.clone()).await;
        if GUEST_DECIDES.contains(&what.as_str()) {
            // The guest passes the operation's requirement; what refuses it is the resource
            // (its project, its recipient), and the example resource does not exist.
            assert_eq!(status, 404, "{what}: a guest reaches the resource lookup, got {body}");
            continue;
        }
        assert_eq!(status, 403, "{what}: valid parameters, no permission, invalid body → 403, got {body}");
        let (status, _, body) = api.call(op.method.clone(), &path, Some(&token), Some(Value::Array(vec![]))).await;
        assert_eq!(status, 403, "{what}: a body that is not an object is still checked after the permission: {body}");
    }
    assert!(checked_projection >= 5, "projected writes walked: {checked_projection}");
}
