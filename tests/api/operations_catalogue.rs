//! The operation catalogue (`api_tests::operations`) covers every operation of the document, and
//! each of its requests succeeds on every store backend; every request not marked `once`
//! succeeds when sent again, as the benches send it. A new operation without a catalogue entry
//! fails here, naming it.

use api_tests::operations::{catalogue, documented, success};
use api_tests::{TestApi, backends};
use std::collections::BTreeSet;

#[tokio::test]
async fn the_catalogue_covers_every_documented_operation_and_each_request_succeeds() {
    let documented = documented();
    for backend in backends().await {
        let api = TestApi::start(&backend).await;
        let catalogue = catalogue(&api).await;
        let mut seen = BTreeSet::new();
        for request in &catalogue.requests {
            assert!(seen.insert(request.operation_id.as_str()), "{} appears twice", request.operation_id);
            let (_, method, path) = documented
                .get(&request.operation_id)
                .unwrap_or_else(|| panic!("{} is not a documented operation", request.operation_id));
            assert_eq!(method, &request.method, "{} ({path})", request.operation_id);
        }
        let missing: Vec<&String> = documented.keys().filter(|id| !seen.contains(id.as_str())).collect();
        assert!(missing.is_empty(), "documented operations without a catalogue request: {missing:?}");

        let mut failures = Vec::new();
        for request in &catalogue.requests {
            let sends = if request.once { 1 } else { 2 };
            for send in 1..=sends {
                let (status, body) = catalogue.send(&api, request).await;
                if !success(request, status) {
                    let body = String::from_utf8_lossy(&body);
                    failures.push(format!("{} {} (send {send}): {status} {body}", request.operation_id, request.path));
                }
            }
        }
        assert!(failures.is_empty(), "[{}] failed requests:\n{}", backend.name, failures.join("\n"));
    }
}
