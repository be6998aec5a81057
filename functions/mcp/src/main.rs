//! The MCP function on AWS Lambda.
fn main() -> Result<(), workapi_kit::function::LambdaError> {
    // Nearly every request needs the tool catalog (`tools.json`): it is parsed on a thread of
    // its own while the runtime starts and the first request waits for the store, not after
    // (docs/performance.md, "The MCP function's first response"). A request that needs it
    // sooner waits for this parse, not for a second one.
    std::thread::spawn(mcp::tools::toolsets);
    workapi_kit::function::run_on_lambda(&mcp::FUNCTION)
}
