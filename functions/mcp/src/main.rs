//! The MCP function on AWS Lambda.
fn main() -> Result<(), shared::function::LambdaError> {
    shared::function::run_on_lambda(&mcp::FUNCTION)
}
