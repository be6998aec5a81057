//! The stored managed-provider settings and their response. Every credential is a
//! [`StoredSecret`] (the name of a secret in the secret store); the response says only whether
//! one is configured (and the last four characters of a long vendor key).

use serde::{Deserialize, Serialize};
use uuid::Uuid;
use workapi_kit::entity::Entity;
use workapi_kit::secrets::SecretName;
use workapi_richtext::{self as richtext, Doc};
use workapi_store::Key;
use workapi_store::keys::WsKeys;

use crate::records::item_key;

/// Where the agent's hosted agent comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum AgentSource {
    /// The provider runs an agent the service defines (`managedAgent`)
    ServiceManaged,
    /// An agent that exists at the provider (`agentId`, `environmentId`)
    Existing,
}
workapi_wire::closed_enum!(AgentSource);

/// Which tools the hosted agent gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum ToolMode {
    /// Task context, comments and status updates
    #[default]
    Basic,
    /// Broad workspace management
    Full,
}
workapi_wire::closed_enum!(ToolMode);

/// How the hosted agent authenticates to an MCP server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum AuthMode {
    #[default]
    None,
    Bearer,
    Oauth,
}
workapi_wire::closed_enum!(AuthMode);

/// How an OAuth client authenticates at its token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TokenEndpointAuthType {
    None,
    ClientSecretBasic,
    ClientSecretPost,
}
workapi_wire::closed_enum!(TokenEndpointAuthType);

/// Vendor skills come from the provider; custom skills are the workspace's (`/agents/skills`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum SkillType {
    Vendor,
    Custom,
}
workapi_wire::closed_enum!(SkillType);

/// A credential kept in the secret store: the table holds its name only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredSecret {
    pub secret: SecretName,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_four: Option<String>,
}

/// A source-code repository record (spec §4.11), as sent and as returned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Repository {
    pub id: i64,
    pub name: String,
    /// owner/repo
    pub full_name: String,
    pub private: bool,
    pub url: String,
    #[schema(required)]
    pub clone_url: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredOAuth {
    pub client_id: Option<String>,
    pub expires_at: Option<String>,
    pub scope: Option<String>,
    pub token_endpoint: Option<String>,
    pub token_endpoint_auth_type: Option<TokenEndpointAuthType>,
    pub access_token: Option<StoredSecret>,
    pub refresh_token: Option<StoredSecret>,
    pub client_secret: Option<StoredSecret>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredMcpServer {
    pub id: String,
    pub name: String,
    pub url: String,
    pub auth_mode: AuthMode,
    pub bearer_token: Option<StoredSecret>,
    pub oauth_credential: Option<StoredOAuth>,
}

/// A skill a managed agent uses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SkillRef {
    pub skill_id: String,
    #[serde(rename = "type")]
    pub skill_type: SkillType,
    /// Null: the latest version
    #[schema(required)]
    pub version: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredManagedAgent {
    pub model_id: String,
    pub instructions: Doc,
    pub mcp_servers: Vec<StoredMcpServer>,
    pub skills: Vec<SkillRef>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredConfig {
    pub agent_source: AgentSource,
    pub agent_id: Option<String>,
    pub environment_id: Option<String>,
    pub allow_network_access: bool,
    pub custom_guidance: Option<String>,
    pub expose_raw_api_credential_to_agent: bool,
    pub tool_mode: ToolMode,
    pub user_vault_ids: Vec<String>,
    pub github_repository_defaults: Vec<Repository>,
    pub managed_agent: Option<StoredManagedAgent>,
}

/// One agent's managed-provider settings: one item, written with optimistic concurrency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ManagedProviderRecord {
    pub agent_id: Uuid,
    pub enabled: bool,
    pub provider_api_key_id: Option<Uuid>,
    pub vendor_api_key: Option<StoredSecret>,
    pub config: StoredConfig,
    pub version: i64,
    pub updated_at: String,
    pub updated_by: Uuid,
}

impl Entity for ManagedProviderRecord {
    const TYPE: &'static str = "ManagedProviderSettings";
    const PREFIX: &'static str = "MANAGEDPROVIDER#";
    type Scope = WsKeys;

    fn key(&self, keys: WsKeys) -> Key {
        settings_key(keys, self.agent_id)
    }
}

pub fn settings_key(keys: WsKeys, agent_id: Uuid) -> Key {
    item_key(keys, ManagedProviderRecord::PREFIX, agent_id)
}

impl StoredOAuth {
    pub fn secrets(&self) -> impl Iterator<Item = &StoredSecret> {
        [&self.access_token, &self.refresh_token, &self.client_secret].into_iter().flatten()
    }
}

impl ManagedProviderRecord {
    /// The name of every secret the settings refer to.
    pub fn secret_names(&self) -> Vec<SecretName> {
        let mut names: Vec<SecretName> = self.vendor_api_key.iter().map(|s| s.secret.clone()).collect();
        for server in self.config.managed_agent.iter().flat_map(|m| &m.mcp_servers) {
            names.extend(server.bearer_token.iter().map(|s| s.secret.clone()));
            names.extend(server.oauth_credential.iter().flat_map(|o| o.secrets()).map(|s| s.secret.clone()));
        }
        names
    }
}

// ---- The response -------------------------------------------------------------------------

/// OAuth credentials of an MCP server: the secret fields are never returned, only whether
/// each is configured.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OAuthCredentialView {
    #[schema(required)]
    pub client_id: Option<String>,
    #[schema(required, format = DateTime)]
    pub expires_at: Option<String>,
    #[schema(required)]
    pub scope: Option<String>,
    #[schema(required)]
    pub token_endpoint: Option<String>,
    #[schema(required)]
    pub token_endpoint_auth_type: Option<TokenEndpointAuthType>,
    pub access_token_configured: bool,
    pub refresh_token_configured: bool,
    pub client_secret_configured: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpServerView {
    /// Stable local id: send it back to keep the server's stored credentials
    pub id: String,
    pub name: String,
    pub url: String,
    pub auth_mode: AuthMode,
    /// Whether the credential its auth mode needs is stored (a bearer token, or an OAuth
    /// access or refresh token); never the credential itself
    pub credential_configured: bool,
    #[schema(required)]
    pub oauth_credential: Option<OAuthCredentialView>,
}

#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManagedAgentView {
    pub model_id: String,
    /// HTML
    pub instructions: String,
    pub mcp_servers: Vec<McpServerView>,
    pub skills: Vec<SkillRef>,
}

#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigView {
    pub agent_source: AgentSource,
    #[schema(required)]
    pub agent_id: Option<String>,
    #[schema(required)]
    pub environment_id: Option<String>,
    pub allow_network_access: bool,
    #[schema(required)]
    pub custom_guidance: Option<String>,
    pub expose_raw_api_credential_to_agent: bool,
    pub tool_mode: ToolMode,
    pub user_vault_ids: Vec<String>,
    pub github_repository_defaults: Vec<Repository>,
    #[schema(required)]
    pub managed_agent: Option<ManagedAgentView>,
}

/// An agent's managed-provider settings, every credential redacted.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(examples(json!({
    "agentId": "6b1f3c2a-4d5e-4f60-8a7b-9c0d1e2f3a4b", "enabled": true, "providerApiKeyId": null,
    "credentialConfigured": true, "vendorApiKeyConfigured": true, "vendorApiKeyLastFour": "Q9xz",
    "config": {"agentSource": "serviceManaged", "agentId": null, "environmentId": null, "allowNetworkAccess": false,
        "customGuidance": null, "exposeRawApiCredentialToAgent": false, "toolMode": "basic", "userVaultIds": [],
        "githubRepositoryDefaults": [], "managedAgent": {"modelId": "claude-sonnet-4-5",
        "instructions": "<p>Triage new tickets.</p>", "mcpServers": [{"id": "docs", "name": "mcp.example.com",
        "url": "https://mcp.example.com/mcp", "authMode": "bearer", "credentialConfigured": true, "oauthCredential": null}],
        "skills": [{"skillId": "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d", "type": "custom", "version": null}]}},
    "version": 2, "updatedAt": "2026-11-23T10:00:00Z"})))]
pub struct ManagedProviderSettings {
    pub agent_id: Uuid,
    pub enabled: bool,
    /// The saved provider key in use, or null
    #[schema(required)]
    pub provider_api_key_id: Option<Uuid>,
    /// Whether a provider credential is set: a saved key or a raw vendor key
    pub credential_configured: bool,
    /// Whether a raw vendor key is stored (never returned)
    pub vendor_api_key_configured: bool,
    /// The stored vendor key's last four characters (null when none is stored, or when it is
    /// shorter than 20 characters)
    #[schema(required)]
    pub vendor_api_key_last_four: Option<String>,
    pub config: ConfigView,
    /// Grows by one on every save
    pub version: i64,
    #[schema(format = DateTime)]
    pub updated_at: String,
}

impl workapi_kit::projection::Compact for ManagedProviderSettings {
    const COMPACT: &'static [&'static str] = &["agentId", "enabled", "credentialConfigured", "version"];
}

pub type ManagedProviderSettingsProjection = workapi_kit::projection::Projected<ManagedProviderSettings>;

fn oauth_view(o: &StoredOAuth) -> OAuthCredentialView {
    OAuthCredentialView {
        client_id: o.client_id.clone(),
        expires_at: o.expires_at.clone(),
        scope: o.scope.clone(),
        token_endpoint: o.token_endpoint.clone(),
        token_endpoint_auth_type: o.token_endpoint_auth_type,
        access_token_configured: o.access_token.is_some(),
        refresh_token_configured: o.refresh_token.is_some(),
        client_secret_configured: o.client_secret.is_some(),
    }
}

fn server_view(s: &StoredMcpServer) -> McpServerView {
    let credential_configured = match s.auth_mode {
        AuthMode::None => false,
        AuthMode::Bearer => s.bearer_token.is_some(),
        AuthMode::Oauth => {
            s.oauth_credential.as_ref().is_some_and(|o| o.access_token.is_some() || o.refresh_token.is_some())
        }
    };
    McpServerView {
        id: s.id.clone(),
        name: s.name.clone(),
        url: s.url.clone(),
        auth_mode: s.auth_mode,
        credential_configured,
        oauth_credential: s.oauth_credential.as_ref().map(oauth_view),
    }
}

pub fn config_view(c: &StoredConfig) -> ConfigView {
    ConfigView {
        agent_source: c.agent_source,
        agent_id: c.agent_id.clone(),
        environment_id: c.environment_id.clone(),
        allow_network_access: c.allow_network_access,
        custom_guidance: c.custom_guidance.clone(),
        expose_raw_api_credential_to_agent: c.expose_raw_api_credential_to_agent,
        tool_mode: c.tool_mode,
        user_vault_ids: c.user_vault_ids.clone(),
        github_repository_defaults: c.github_repository_defaults.clone(),
        managed_agent: c.managed_agent.as_ref().map(|m| ManagedAgentView {
            model_id: m.model_id.clone(),
            instructions: richtext::to_html(&m.instructions),
            mcp_servers: m.mcp_servers.iter().map(server_view).collect(),
            skills: m.skills.clone(),
        }),
    }
}

impl From<&ManagedProviderRecord> for ManagedProviderSettings {
    fn from(r: &ManagedProviderRecord) -> Self {
        ManagedProviderSettings {
            agent_id: r.agent_id,
            enabled: r.enabled,
            provider_api_key_id: r.provider_api_key_id,
            credential_configured: r.provider_api_key_id.is_some() || r.vendor_api_key.is_some(),
            vendor_api_key_configured: r.vendor_api_key.is_some(),
            vendor_api_key_last_four: r.vendor_api_key.as_ref().and_then(|k| k.last_four.clone()),
            config: config_view(&r.config),
            version: r.version,
            updated_at: r.updated_at.clone(),
        }
    }
}
