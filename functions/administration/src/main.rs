//! The administration function on AWS Lambda (API Gateway REST proxy events).

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::telemetry::init_lambda();
    let state = shared::AppState::from_lambda_env().await?;
    lambda_http::run(administration::router(state)).await
}
