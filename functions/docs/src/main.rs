//! The docs function on AWS Lambda.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::telemetry::init_lambda();
    let state = shared::AppState::from_lambda_env().await?;
    lambda_http::run(docs::router(state)).await
}
