//! The events function on AWS Lambda.
fn main() -> Result<(), workapi_kit::function::LambdaError> {
    workapi_kit::function::run_on_lambda(&events::FUNCTION)
}
