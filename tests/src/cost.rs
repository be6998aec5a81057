//! Cost per million requests of one operation (docs/performance.md, "Cost per million
//! requests"; bench `roundtrips`): API Gateway, Lambda requests and duration at the function's
//! `MemorySize` in template.yaml, and DynamoDB on-demand capacity. Prices are AWS's published
//! on-demand prices for us-east-1 (x86_64 Lambda, REST API), as of the date in the doc.

use crate::capacity::Capacity;

/// REST API requests, per million (the first 333 million a month).
pub const API_GATEWAY_PER_MILLION: f64 = 3.50;
/// Lambda requests, per million.
pub const LAMBDA_REQUESTS_PER_MILLION: f64 = 0.20;
/// Lambda duration, per GB-second (x86_64, the first 6 billion GB-seconds a month).
pub const LAMBDA_PER_GB_SECOND: f64 = 0.000_016_666_7;
/// DynamoDB on-demand, per million read request units.
pub const DYNAMODB_READ_PER_MILLION: f64 = 0.125;
/// DynamoDB on-demand, per million write request units.
pub const DYNAMODB_WRITE_PER_MILLION: f64 = 0.625;

/// One operation's cost per million requests, by service, in US dollars.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cost {
    pub api_gateway: f64,
    pub lambda: f64,
    pub dynamodb: f64,
}

impl Cost {
    /// `duration_ms`: the invocation's duration (Lambda bills it rounded up to the millisecond);
    /// `memory_mb`: the function's MemorySize.
    pub fn of(capacity: Capacity, duration_ms: f64, memory_mb: u32) -> Cost {
        let billed_seconds = duration_ms.max(1.0).ceil() / 1000.0;
        let gb_seconds = billed_seconds * f64::from(memory_mb) / 1024.0;
        Cost {
            api_gateway: API_GATEWAY_PER_MILLION,
            lambda: LAMBDA_REQUESTS_PER_MILLION + gb_seconds * LAMBDA_PER_GB_SECOND * 1e6,
            dynamodb: capacity.read_units * DYNAMODB_READ_PER_MILLION
                + capacity.write_units * DYNAMODB_WRITE_PER_MILLION,
        }
    }

    pub fn total(&self) -> f64 {
        self.api_gateway + self.lambda + self.dynamodb
    }
}

/// The `MemorySize` template.yaml gives the function whose `Binary` is `binary`: its own, else
/// the `Globals` one. None when the template names no such function or no size at all.
pub fn memory_size(template: &str, binary: &str) -> Option<u32> {
    let size = |line: &str| line.trim().strip_prefix("MemorySize:").and_then(|v| v.trim().parse().ok());
    let global = template.split("\nResources:").next().and_then(|globals| globals.lines().find_map(size));
    // The resource's text: from its `Type:` line to the next resource's.
    let resources = template.split("Type: AWS::Serverless::Function").skip(1);
    for resource in resources {
        let binary_line = resource.lines().find_map(|l| l.trim().strip_prefix("Binary:").map(str::trim));
        if binary_line == Some(binary) {
            return resource.lines().find_map(size).or(global);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEMPLATE: &str = "Globals:\n  Function:\n    MemorySize: 256\nResources:\n  A:\n    Type: AWS::Serverless::Function\n    Metadata:\n      BuildProperties:\n        Binary: a\n    Properties:\n      MemorySize: 128\n  B:\n    Type: AWS::Serverless::Function\n    Metadata:\n      BuildProperties:\n        Binary: b\n";

    #[test]
    fn memory_is_the_function_s_own_else_the_global_one() {
        assert_eq!(memory_size(TEMPLATE, "a"), Some(128));
        assert_eq!(memory_size(TEMPLATE, "b"), Some(256));
        assert_eq!(memory_size(TEMPLATE, "c"), None);
    }

    #[test]
    fn a_request_costs_its_services_prices() {
        let capacity = Capacity { read_units: 3.0, write_units: 1.0 };
        let cost = Cost::of(capacity, 10.2, 128);
        assert_eq!(cost.api_gateway, 3.50);
        // 11 ms at 1/8 GB: 0.001375 GB-s a request.
        assert!((cost.lambda - (0.20 + 0.001375 * 16.6667)).abs() < 1e-4, "{cost:?}");
        assert!((cost.dynamodb - (3.0 * 0.125 + 0.625)).abs() < 1e-9, "{cost:?}");
        assert!((cost.total() - (cost.api_gateway + cost.lambda + cost.dynamodb)).abs() < 1e-12);
    }
}
