//! The floor every function's cold start is compared with (bench/coldstart.sh): what any Rust
//! Lambda function on this stack pays, with the same dependency versions and features and the
//! same release profile. An aws-sdk-dynamodb client built at init, one GetItem per request,
//! nothing else; the SDK's HTTP client on rustls with ring, as the functions build it.

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::types::AttributeValue;
use axum::Router;
use axum::extract::State;

#[derive(Clone)]
struct Floor {
    client: Client,
    table: String,
}

fn main() -> Result<(), lambda_http::Error> {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async {
        // The same HTTP client as the functions' (workapi_store::aws): rustls on ring, not the SDK's
        // default aws-lc, so that the floor differs from them only by their own code.
        use aws_smithy_http_client::tls::{Provider, rustls_provider::CryptoMode};
        let http =
            aws_smithy_http_client::Builder::new().tls_provider(Provider::Rustls(CryptoMode::Ring)).build_https();
        let config = aws_config::from_env().http_client(http).load().await;
        let table = std::env::var("TABLE_NAME").map_err(|_| "TABLE_NAME is not set")?;
        let floor = Floor { client: Client::new(&config), table };
        lambda_http::run(Router::new().fallback(get_item).with_state(floor)).await
    })
}

async fn get_item(State(floor): State<Floor>) -> String {
    let key = |name: &str| (name.to_owned(), AttributeValue::S("floor".into()));
    let read =
        floor.client.get_item().table_name(&floor.table).set_key(Some([key("PK"), key("SK")].into())).send().await;
    match read {
        Ok(out) => format!("{{\"found\":{}}}", out.item.is_some()),
        Err(e) => format!(
            "{{\"error\":\"{}\"}}",
            aws_sdk_dynamodb::error::DisplayErrorContext(&e).to_string().replace('"', "'")
        ),
    }
}
