//! The body of `POST /agents/{id}/managed-provider` (spec §4.11), field by field. Types carry
//! the bounds; the rules between fields (agentSource, auth modes, credentials kept or cleared)
//! are checked by [`super::plan`] and documented by [`schema`] wherever JSON Schema can say them.

mod schema;

use super::model::{AgentSource, AuthMode, SkillType, TokenEndpointAuthType, ToolMode};
use crate::fields::{AgentInstructions, FullName, HttpsUrl, Ident, McpUrl, Secret};
use uuid::Uuid;
use workapi_kit::input::{DateTime, Input, Integer, List, MultilineText, Nullable, Patch, Text};

/// Most skills of a managed agent (spec §8.5).
pub const MAX_SKILLS: usize = 20;
pub const MAX_MCP_SERVERS: usize = 20;
pub const MAX_REPOSITORIES: usize = 50;
pub const MAX_VAULTS: usize = 50;
pub const MAX_GUIDANCE_CHARS: usize = 10_000;

/// A provider API key: 8 to 4096 characters.
pub type VendorKey = Secret<8, 4096>;
/// A token or client secret: 1 to 8192 characters.
pub type Token = Secret<1, 8192>;

/// Managed-provider settings. Credentials are write-only: leave one out to keep the stored
/// value, send null to clear it.
#[derive(Input)]
#[input(schema = schema::save_body)]
#[input(example = serde_json::json!({
    "enabled": true,
    "vendorApiKey": "<API_KEY>",
    "config": {
        "agentSource": "serviceManaged",
        "allowNetworkAccess": false,
        "customGuidance": "Reply in the customer's language.",
        "exposeRawApiCredentialToAgent": false,
        "toolMode": "basic",
        "userVaultIds": [],
        "githubRepositoryDefaults": [{"id": 1296269, "name": "hello-world", "fullName": "octo-org/hello-world",
            "private": false, "url": "https://github.com/octo-org/hello-world",
            "cloneUrl": "https://github.com/octo-org/hello-world.git"}],
        "managedAgent": {
            "modelId": "claude-sonnet-4-5",
            "instructions": "Triage **new** tickets.",
            "mcpServers": [{"url": "https://mcp.example.com/mcp", "authMode": "bearer", "bearerToken": "<ACCESS_TOKEN>"}],
            "skills": [{"skillId": "pdf", "type": "vendor", "version": null}]
        }
    }
}))]
pub struct SaveManagedProviderBody {
    /// Enables or disables the connection; enabling needs a credential: providerApiKeyId or
    /// vendorApiKey, sent or stored
    pub enabled: bool,
    /// A saved provider key of the workspace (preferred over a raw key; it must exist); null
    /// clears it. Not together with a vendorApiKey
    pub provider_api_key_id: Patch<Uuid>,
    /// A raw provider API key, kept in the secret store; null clears it. Not together with a
    /// providerApiKeyId
    pub vendor_api_key: Patch<VendorKey>,
    pub config: ConfigInput,
}

/// The connection's configuration: replaced as a whole on every save (its credentials aside).
/// One object per agentSource: `existing` names the provider's agent (agentId and
/// environmentId), `serviceManaged` defines it (managedAgent)
#[derive(Input)]
#[input(schema = schema::config)]
pub struct ConfigInput {
    pub agent_source: AgentSource,
    /// The provider's agent id: required for existing, refused for serviceManaged
    pub agent_id: Patch<Ident<200>>,
    /// The provider's environment id: required for existing, refused for serviceManaged
    pub environment_id: Patch<Ident<200>>,
    /// Unrestricted outbound access from the sandbox (default false; the service's own hosts
    /// stay allowed)
    pub allow_network_access: Option<bool>,
    /// Appended to task-session instructions (plain text)
    pub custom_guidance: Patch<MultilineText<1, MAX_GUIDANCE_CHARS>>,
    /// Default false
    pub expose_raw_api_credential_to_agent: Option<bool>,
    /// Default basic
    pub tool_mode: Option<ToolMode>,
    /// Distinct (unique items); default none
    pub user_vault_ids: Option<List<Ident<200>, MAX_VAULTS>>,
    /// Distinct by id, each name the repository part of its fullName; default none
    pub github_repository_defaults: Option<List<RepositoryInput, MAX_REPOSITORIES>>,
    /// Required for serviceManaged
    pub managed_agent: Patch<ManagedAgentInput>,
}

/// A source-code repository (every field required)
#[derive(Input)]
pub struct RepositoryInput {
    pub id: Integer<1, { i64::MAX }>,
    /// The repository part of fullName
    pub name: Text<1, 100>,
    pub full_name: FullName,
    pub private: bool,
    pub url: HttpsUrl,
    pub clone_url: Nullable<HttpsUrl>,
}

#[derive(Input)]
pub struct ManagedAgentInput {
    pub model_id: Ident<200>,
    /// Markdown, HTML or IDoc JSON (object or string); default empty
    pub instructions: Patch<AgentInstructions>,
    pub mcp_servers: Option<List<McpServerInput, MAX_MCP_SERVERS>>,
    /// At most 20, distinct by type and skillId; only when agentSource is serviceManaged
    pub skills: Option<List<SkillRefInput, MAX_SKILLS>>,
}

/// An MCP server. Its credentials are kept by `id`: a server sent without `id` takes the id of
/// the stored server with the same URL, else a new one. Ids are distinct. One object per
/// authMode: each takes its own credential and refuses the other's.
#[derive(Input)]
#[input(schema = schema::mcp_server)]
pub struct McpServerInput {
    pub url: McpUrl,
    /// Default: the URL's host
    pub name: Option<Text<1, 100>>,
    /// Stable local id (letters, digits, . _ - : @)
    pub id: Option<Ident<100>>,
    /// Default none
    pub auth_mode: Option<AuthMode>,
    /// For authMode bearer; kept when left out, null clears it
    pub bearer_token: Patch<Token>,
    /// For authMode oauth; kept when left out, null clears it
    pub oauth_credential: Patch<OAuthCredentialInput>,
}

/// OAuth credentials. The secret fields (accessToken, refreshToken, clientSecret) are kept
/// when left out and cleared by null; the other fields are saved as sent (left out: null).
/// After that: an accessToken or a refreshToken is needed, a refreshToken needs a
/// tokenEndpoint, and tokenEndpointAuthType client_secret_basic or client_secret_post needs a
/// clientId and a clientSecret.
#[derive(Input)]
pub struct OAuthCredentialInput {
    pub access_token: Patch<Token>,
    pub refresh_token: Patch<Token>,
    pub client_secret: Patch<Secret<1, 1024>>,
    pub client_id: Patch<Text<1, 500>>,
    pub expires_at: Patch<DateTime>,
    pub scope: Patch<Text<1, 1000>>,
    pub token_endpoint: Patch<HttpsUrl>,
    pub token_endpoint_auth_type: Patch<TokenEndpointAuthType>,
}

#[derive(Input)]
pub struct SkillRefInput {
    /// A vendor skill's id, or for type custom the id of a skill of the workspace
    pub skill_id: Ident<200>,
    #[input(rename = "type")]
    pub skill_type: SkillType,
    /// Null: the latest version (a custom skill's version is a number up to its current one)
    pub version: Patch<Ident<50>>,
}
