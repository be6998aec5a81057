//! One descriptor per function (docs/functions.md): its name, the path prefixes API Gateway
//! routes to it, its tags in the document, its routes with their documentation, the entities
//! it owns, and what it needs deployed ([`Needs`]: its API Gateway resources, IAM grants,
//! environment, memory and timeout). The registry (`registry::FUNCTIONS`) lists every
//! descriptor; the document, the local server, the tests and template.yaml's function blocks
//! (`workapi template`) are made from it, and a function's `main.rs` is one call to
//! [`run_on_lambda`].

use crate::AppState;
use crate::entity::EntityKind;
use crate::openapi::ApiTag;
use axum::Router;
use utoipa_axum::router::OpenApiRouter;

pub struct Function {
    /// The crate, the `events/<name>/` folder and the SAM resource `<Name>Function`.
    pub name: &'static str,
    /// Path prefixes routed to this function (`/tags` serves `/tags/…`).
    pub prefixes: &'static [&'static str],
    /// The document's top-level tags of its operations.
    pub tags: &'static [ApiTag],
    /// The routes with their OpenAPI declarations (`utoipa_axum::routes!`).
    pub api: fn() -> OpenApiRouter<AppState>,
    /// The entities whose items it writes.
    pub entities: &'static [EntityKind],
    /// Each operation of it that changes state, and the event types it records
    /// (docs/events.md); the registry test requires one for every such operation.
    pub emits: &'static [crate::events::Emits],
    /// What it needs deployed: template.yaml's block is generated from it.
    pub needs: Needs,
}

/// What a function needs from the stack (template.yaml): `workapi template` writes its
/// `<Name>Function` resource and log group from this, so nothing of it is written by hand.
/// Every function also gets the template's `Globals` (the table's name, the credential
/// secrets' ids, the site URL, CORS origins) and the rate-limit counters
/// (`FunctionBasePolicy`).
pub struct Needs {
    /// What it serves, in the resource's description: `workapi <name> (<summary>)`.
    pub summary: &'static str,
    /// Why it is deployed as it is: a comment above its resource ("" for none).
    pub note: &'static str,
    /// The API Gateway resources that invoke it.
    pub routes: &'static [Route],
    /// The table's items and index and the credential secrets (the managed
    /// `DataAccessPolicy`): every function that serves authenticated requests.
    pub data: bool,
    /// IAM actions on the stack's other resources.
    pub grants: &'static [Grant],
    /// Environment variables besides the global ones and those its grants' resources bring.
    pub environment: &'static [Variable],
    /// None: the global 512 MB.
    pub memory: Option<Memory>,
    /// None: the global [`GLOBAL_TIMEOUT_SECONDS`].
    pub timeout_seconds: Option<u32>,
    /// Functions whose routes it serves in process (mcp: the registry): it needs what they need.
    pub runs: &'static [&'static Function],
}

/// The `Timeout` of template.yaml's `Globals`: a function's unless its needs say otherwise.
pub const GLOBAL_TIMEOUT_SECONDS: u32 = 10;

impl Needs {
    /// A function serving authenticated requests from the table, with nothing else.
    pub const DATA: Needs = Needs {
        summary: "",
        note: "",
        routes: &[],
        data: true,
        grants: &[],
        environment: &[],
        memory: None,
        timeout_seconds: None,
        runs: &[],
    };
}

/// An API Gateway resource (`ANY` method) that invokes the function: the SAM event `event`.
pub struct Route {
    pub event: &'static str,
    /// `/tags/{proxy+}`: API Gateway matches a literal segment before `{param}`, before `{proxy+}`.
    pub path: &'static str,
    /// Why the route is there: a comment above it ("" for none).
    pub note: &'static str,
}

impl Route {
    pub const fn new(event: &'static str, path: &'static str) -> Route {
        Route { event, path, note: "" }
    }
}

/// One IAM statement: `actions` on `on`.
#[derive(Debug, PartialEq, Eq)]
pub struct Grant {
    /// The statement's id, unique in a policy.
    pub sid: &'static str,
    pub actions: &'static [&'static str],
    pub on: Resource,
    /// Why: a comment above the statement ("" for none).
    pub note: &'static str,
}

/// The stack's resources a function may be granted, beyond the table and the credential
/// secrets. Each brings the environment variable that names it to the function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resource {
    /// The objects of uploaded files, `files/*` of the `FilesBucket` (docs/files.md).
    UploadedFiles,
    /// The agents' credential secrets, `workapi/<stack>/agents/*` (docs/agents.md).
    AgentSecrets,
    /// Webhook endpoints' signing secrets, `workapi/<stack>/agents/<workspace>/webhooks/*`: under the
    /// one prefix of the workspaces' secrets (named when agents' credentials came first), so a
    /// function holding both (mcp) has one `SECRETS_PREFIX`, and only these names (docs/events.md).
    WebhookSecrets,
    /// The delivery queue of webhook attempts, `DeliveryQueue` (docs/events.md#delivery).
    DeliveryQueue,
}

impl Resource {
    /// Its ARN as a CloudFormation expression.
    pub const fn arn(self) -> &'static str {
        match self {
            Resource::UploadedFiles => r#"!Sub "${FilesBucket.Arn}/files/*""#,
            Resource::AgentSecrets => {
                r#"!Sub "arn:${AWS::Partition}:secretsmanager:${AWS::Region}:${AWS::AccountId}:secret:workapi/${AWS::StackName}/agents/*""#
            }
            Resource::WebhookSecrets => {
                r#"!Sub "arn:${AWS::Partition}:secretsmanager:${AWS::Region}:${AWS::AccountId}:secret:workapi/${AWS::StackName}/agents/*/webhooks/*""#
            }
            Resource::DeliveryQueue => "!GetAtt DeliveryQueue.Arn",
        }
    }

    /// The environment variable that tells the function where it is (`workapi_kit::app`).
    pub const fn variable(self) -> Variable {
        match self {
            Resource::UploadedFiles => Variable { name: "FILES_BUCKET", value: "!Ref FilesBucket" },
            Resource::AgentSecrets | Resource::WebhookSecrets => {
                Variable { name: "SECRETS_PREFIX", value: r#"!Sub "workapi/${AWS::StackName}/agents/""# }
            }
            Resource::DeliveryQueue => Variable { name: "DELIVERY_QUEUE_URL", value: "!Ref DeliveryQueue" },
        }
    }
}

/// An environment variable; its value is a CloudFormation expression (`!Ref FilesQuotaBytes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Variable {
    pub name: &'static str,
    pub value: &'static str,
}

/// A memory size other than the global one, and why (memory buys CPU on Lambda).
pub struct Memory {
    pub megabytes: u32,
    pub why: &'static str,
}

impl Function {
    /// The routes, without the shared layers (the local server merges several of these), each
    /// naming its function and operation for the request's metrics (`workapi_kit::metrics`).
    pub fn routes(&self) -> Router<AppState> {
        let (routes, document) = (self.api)().split_for_parts();
        crate::metrics::tag_operations(routes, self.name, &document)
    }

    /// The finished service: the routes behind the shared HTTP conventions.
    pub fn router(&self, state: AppState) -> Router {
        crate::http::service(self.routes(), state)
    }

    /// This function's part of the OpenAPI document.
    pub fn document(&self) -> utoipa::openapi::OpenApi {
        (self.api)().split_for_parts().1
    }
}

/// The error a Lambda entry point returns.
pub type LambdaError = lambda_http::Error;

/// Runs a function on AWS Lambda (API Gateway REST proxy events): telemetry, the state from
/// the environment (`AppState::from_lambda_env`), then the function's router.
pub fn run_on_lambda(function: &'static Function) -> Result<(), LambdaError> {
    let runtime = crate::http::runtime()?;
    runtime.block_on(async {
        crate::telemetry::init_lambda(function.name);
        let state = AppState::from_lambda_env().await?;
        lambda_http::run(function.router(state)).await
    })
}
