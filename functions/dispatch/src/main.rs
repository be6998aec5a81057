//! The events dispatcher on AWS Lambda: the table's stream and the delivery queue
//! (`dispatch::lambda`; docs/events.md#delivery).
use lambda_http::lambda_runtime::{self, LambdaEvent, service_fn};
use std::sync::Arc;
use workapi_kit::function::LambdaError;

fn main() -> Result<(), LambdaError> {
    let runtime = workapi_kit::http::runtime()?;
    runtime.block_on(async {
        workapi_kit::telemetry::init_lambda("dispatch");
        let state = workapi_kit::AppState::from_lambda_env().await?;
        let queue = state.queue_arc().ok_or("DELIVERY_QUEUE_URL is not set")?;
        let dispatcher = Arc::new(dispatch::Dispatcher::new(state, queue).map_err(|e| e.message)?);
        lambda_runtime::run(service_fn(move |event: LambdaEvent<serde_json::Value>| {
            let dispatcher = dispatcher.clone();
            async move { Ok::<_, LambdaError>(dispatch::lambda::handle(&dispatcher, &event.payload).await) }
        }))
        .await
    })
}
