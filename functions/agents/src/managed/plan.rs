//! What a save does, as a plain function of the stored settings and the body: the new
//! record, the secrets to create (fresh names) and the stored secrets it no longer refers to.
//! No I/O here; the rules between fields are checked and every problem is reported by path.

use super::input::{ConfigInput, McpServerInput, OAuthCredentialInput, SaveManagedProviderBody};
use super::model::*;
use crate::records::{last_four, new_secret_name};
use std::collections::{HashMap, HashSet};
use uuid::Uuid;
use workapi_kit::error::FieldErrors;
use workapi_kit::input::Patch;
use workapi_kit::secrets::{SecretName, SecretValue};
use workapi_kit::{ApiError, ApiResult};
use workapi_richtext::Doc;
use workapi_store::keys::WsKeys;

/// What the plan needs to know besides the body and the stored settings.
pub struct Context<'a> {
    pub keys: WsKeys,
    pub agent_id: Uuid,
    pub by: Uuid,
    pub now: String,
    /// Whether `providerApiKeyId` (when sent) names a saved key of the workspace.
    pub provider_key_exists: bool,
    /// The workspace's skills: id → current version.
    pub skills: &'a HashMap<Uuid, i64>,
}

pub struct Plan {
    pub record: ManagedProviderRecord,
    /// New secrets, written before the record.
    pub create: Vec<(SecretName, SecretValue)>,
    /// Secrets of the stored settings that the new record no longer refers to, deleted after
    /// the record is written.
    pub delete: Vec<SecretName>,
}

struct Planner<'a> {
    ctx: &'a Context<'a>,
    errors: FieldErrors,
    create: Vec<(SecretName, SecretValue)>,
}

impl Planner<'_> {
    fn error(&mut self, path: &str, message: impl Into<String>) {
        self.errors.entry(path.to_owned()).or_default().push(message.into());
    }

    /// A new secret for `value` (its last four kept when `show_last_four` and it is long).
    fn secret(&mut self, value: &SecretValue, show_last_four: bool) -> StoredSecret {
        let name = new_secret_name(self.ctx.keys, &format!("agents/{}", self.ctx.agent_id.simple()));
        self.create.push((name.clone(), value.clone()));
        StoredSecret { secret: name, last_four: show_last_four.then(|| last_four(value.expose())).flatten() }
    }

    /// A secret field: absent keeps `stored`, null clears, a value is a new secret.
    fn keep_or_replace<const MIN: usize, const MAX: usize>(
        &mut self,
        sent: &Patch<crate::fields::Secret<MIN, MAX>>,
        stored: Option<&StoredSecret>,
    ) -> Option<StoredSecret> {
        match sent {
            Patch::Absent => stored.cloned(),
            Patch::Null => None,
            Patch::Value(v) => Some(self.secret(&v.0, false)),
        }
    }
}

pub fn plan(
    existing: Option<&ManagedProviderRecord>,
    body: &SaveManagedProviderBody,
    ctx: &Context,
) -> ApiResult<Plan> {
    let mut p = Planner { ctx, errors: FieldErrors::new(), create: Vec::new() };

    // The provider credential: a saved key or a raw key, one at a time.
    if matches!((&body.provider_api_key_id, &body.vendor_api_key), (Patch::Value(_), Patch::Value(_))) {
        p.error("vendorApiKey", "send providerApiKeyId or vendorApiKey, not both");
    }
    let mut provider_api_key_id = match &body.provider_api_key_id {
        Patch::Absent => existing.and_then(|e| e.provider_api_key_id),
        Patch::Null => None,
        Patch::Value(id) => {
            if !ctx.provider_key_exists {
                p.error("providerApiKeyId", "no saved provider API key with this id in the workspace");
            }
            Some(*id)
        }
    };
    let mut vendor_api_key = match &body.vendor_api_key {
        Patch::Absent => existing.and_then(|e| e.vendor_api_key.clone()),
        Patch::Null => None,
        Patch::Value(key) => Some(p.secret(&key.0, true)),
    };
    if matches!(body.provider_api_key_id, Patch::Value(_)) {
        vendor_api_key = None;
    }
    if matches!(body.vendor_api_key, Patch::Value(_)) {
        provider_api_key_id = None;
    }
    if body.enabled && provider_api_key_id.is_none() && vendor_api_key.is_none() {
        p.error("enabled", "enabling needs a credential: providerApiKeyId or vendorApiKey");
    }

    let stored_agent = existing.and_then(|e| e.config.managed_agent.as_ref());
    let config = plan_config(&mut p, &body.config, stored_agent);

    let Planner { errors, create, .. } = p;
    if !errors.is_empty() {
        return Err(ApiError::validation(errors));
    }
    let record = ManagedProviderRecord {
        agent_id: ctx.agent_id,
        enabled: body.enabled,
        provider_api_key_id,
        vendor_api_key,
        config: config.expect("a config whenever there are no errors"),
        version: existing.map_or(1, |e| e.version + 1),
        updated_at: ctx.now.clone(),
        updated_by: ctx.by,
    };
    let kept: HashSet<SecretName> = record.secret_names().into_iter().collect();
    let delete =
        existing.map(|e| e.secret_names()).unwrap_or_default().into_iter().filter(|n| !kept.contains(n)).collect();
    Ok(Plan { record, create, delete })
}

fn plan_config(p: &mut Planner, c: &ConfigInput, stored: Option<&StoredManagedAgent>) -> Option<StoredConfig> {
    let agent_id = c.agent_id.clone().into_option().map(|i| i.0);
    let environment_id = c.environment_id.clone().into_option().map(|i| i.0);
    for (field, value) in [("agentId", &agent_id), ("environmentId", &environment_id)] {
        match (c.agent_source, value) {
            (AgentSource::Existing, None) => {
                p.error(&format!("config.{field}"), format!("{field} is required when agentSource is existing"))
            }
            (AgentSource::ServiceManaged, Some(_)) => {
                p.error(&format!("config.{field}"), format!("{field} is only for agentSource existing"))
            }
            _ => {}
        }
    }
    let user_vault_ids: Vec<String> = c.user_vault_ids.iter().flat_map(|l| l.0.iter()).map(|i| i.0.clone()).collect();
    let mut seen = HashSet::new();
    for (i, id) in user_vault_ids.iter().enumerate() {
        if !seen.insert(id) {
            p.error(&format!("config.userVaultIds[{i}]"), format!("{id} appears twice"));
        }
    }
    let mut repositories = Vec::new();
    let mut seen = HashSet::new();
    for (i, r) in c.github_repository_defaults.iter().flat_map(|l| l.0.iter()).enumerate() {
        let at = format!("config.githubRepositoryDefaults[{i}]");
        if !seen.insert(r.id.0) {
            p.error(&format!("{at}.id"), format!("{} appears twice", r.id.0));
        }
        let repo_part = r.full_name.0.split_once('/').map_or("", |(_, repo)| repo);
        if r.name.as_str() != repo_part {
            p.error(&format!("{at}.name"), "name must be the repository part of fullName");
        }
        repositories.push(Repository {
            id: r.id.0,
            name: r.name.as_str().to_owned(),
            full_name: r.full_name.0.clone(),
            private: r.private,
            url: r.url.0.clone(),
            clone_url: r.clone_url.0.as_ref().map(|u| u.0.clone()),
        });
    }
    let managed_agent = match (&c.managed_agent, c.agent_source) {
        (Patch::Value(m), source) => {
            if source == AgentSource::Existing && m.skills.as_ref().is_some_and(|s| !s.0.is_empty()) {
                p.error("config.managedAgent.skills", "skills are only allowed when agentSource is serviceManaged");
            }
            let mcp_servers = plan_servers(p, m.mcp_servers.as_ref().map_or(&[][..], |l| &l.0[..]), stored);
            let skills = plan_skills(p, m.skills.as_ref().map_or(&[][..], |l| &l.0[..]));
            let instructions = m.instructions.clone().into_option().map_or_else(Doc::empty, |i| i.0);
            Some(StoredManagedAgent { model_id: m.model_id.0.clone(), instructions, mcp_servers, skills })
        }
        (_, AgentSource::ServiceManaged) => {
            p.error("config.managedAgent", "managedAgent is required when agentSource is serviceManaged");
            None
        }
        (_, AgentSource::Existing) => None,
    };
    Some(StoredConfig {
        agent_source: c.agent_source,
        agent_id,
        environment_id,
        allow_network_access: c.allow_network_access.unwrap_or(false),
        custom_guidance: c.custom_guidance.clone().into_option().map(|g| g.into_string()),
        expose_raw_api_credential_to_agent: c.expose_raw_api_credential_to_agent.unwrap_or(false),
        tool_mode: c.tool_mode.unwrap_or_default(),
        user_vault_ids,
        github_repository_defaults: repositories,
        managed_agent,
    })
}

/// The name of a server without one: its URL's host.
pub fn derived_name(url: &str) -> String {
    url::Url::parse(url).ok().and_then(|u| u.host_str().map(str::to_owned)).unwrap_or_else(|| url.to_owned())
}

fn plan_servers(p: &mut Planner, sent: &[McpServerInput], stored: Option<&StoredManagedAgent>) -> Vec<StoredMcpServer> {
    let old: Vec<&StoredMcpServer> = stored.map(|m| m.mcp_servers.iter().collect()).unwrap_or_default();
    // Ids sent explicitly are claimed first; a server sent without one takes the id of an
    // unclaimed stored server with the same URL, else a new id.
    let mut claimed: HashSet<String> = sent.iter().filter_map(|s| s.id.as_ref().map(|i| i.0.clone())).collect();
    let mut ids = Vec::new();
    for s in sent {
        let id = match &s.id {
            Some(id) => id.0.clone(),
            None => match old.iter().find(|o| o.url == s.url.0 && !claimed.contains(&o.id)) {
                Some(o) => {
                    claimed.insert(o.id.clone());
                    o.id.clone()
                }
                None => Uuid::new_v4().simple().to_string(),
            },
        };
        ids.push(id);
    }
    let mut seen = HashSet::new();
    let mut servers = Vec::new();
    for (i, (s, id)) in sent.iter().zip(ids).enumerate() {
        let at = format!("config.managedAgent.mcpServers[{i}]");
        if !seen.insert(id.clone()) {
            p.error(&format!("{at}.id"), format!("{id} appears twice"));
        }
        let matched = old.iter().find(|o| o.id == id).copied();
        let auth_mode = s.auth_mode.unwrap_or_default();
        let mut bearer_token = None;
        let mut oauth_credential = None;
        match auth_mode {
            AuthMode::Bearer => {
                bearer_token = p.keep_or_replace(&s.bearer_token, matched.and_then(|m| m.bearer_token.as_ref()));
                if bearer_token.is_none() {
                    p.error(&format!("{at}.bearerToken"), "bearerToken is required for authMode bearer");
                }
            }
            AuthMode::Oauth => {
                let stored = matched.and_then(|m| m.oauth_credential.as_ref());
                oauth_credential = match &s.oauth_credential {
                    Patch::Absent => stored.cloned(),
                    Patch::Null => None,
                    Patch::Value(o) => Some(merge_oauth(p, o, stored)),
                };
                check_oauth(p, &at, oauth_credential.as_ref());
            }
            AuthMode::None => {}
        }
        if auth_mode != AuthMode::Bearer && matches!(s.bearer_token, Patch::Value(_)) {
            p.error(&format!("{at}.bearerToken"), "bearerToken is only for authMode bearer");
        }
        if auth_mode != AuthMode::Oauth && matches!(s.oauth_credential, Patch::Value(_)) {
            p.error(&format!("{at}.oauthCredential"), "oauthCredential is only for authMode oauth");
        }
        servers.push(StoredMcpServer {
            id,
            name: s.name.as_ref().map_or_else(|| derived_name(&s.url.0), |n| n.as_str().to_owned()),
            url: s.url.0.clone(),
            auth_mode,
            bearer_token,
            oauth_credential,
        });
    }
    servers
}

fn merge_oauth(p: &mut Planner, o: &OAuthCredentialInput, stored: Option<&StoredOAuth>) -> StoredOAuth {
    StoredOAuth {
        client_id: o.client_id.clone().into_option().map(|t| t.into_string()),
        expires_at: o.expires_at.clone().into_option().map(|d| workapi_store::clock::rfc3339(d.0)),
        scope: o.scope.clone().into_option().map(|t| t.into_string()),
        token_endpoint: o.token_endpoint.clone().into_option().map(|u| u.0),
        token_endpoint_auth_type: o.token_endpoint_auth_type.clone().into_option(),
        access_token: p.keep_or_replace(&o.access_token, stored.and_then(|s| s.access_token.as_ref())),
        refresh_token: p.keep_or_replace(&o.refresh_token, stored.and_then(|s| s.refresh_token.as_ref())),
        client_secret: p.keep_or_replace(&o.client_secret, stored.and_then(|s| s.client_secret.as_ref())),
    }
}

fn check_oauth(p: &mut Planner, at: &str, oauth: Option<&StoredOAuth>) {
    let Some(o) = oauth else {
        p.error(&format!("{at}.oauthCredential"), "oauthCredential is required for authMode oauth");
        return;
    };
    let at = format!("{at}.oauthCredential");
    if o.access_token.is_none() && o.refresh_token.is_none() {
        p.error(&at, "oauthCredential needs an accessToken or a refreshToken");
    }
    if o.refresh_token.is_some() && o.token_endpoint.is_none() {
        p.error(&format!("{at}.tokenEndpoint"), "tokenEndpoint is required with a refreshToken");
    }
    if matches!(
        o.token_endpoint_auth_type,
        Some(TokenEndpointAuthType::ClientSecretBasic | TokenEndpointAuthType::ClientSecretPost)
    ) {
        if o.client_id.is_none() {
            p.error(&format!("{at}.clientId"), "clientId is required for this tokenEndpointAuthType");
        }
        if o.client_secret.is_none() {
            p.error(&format!("{at}.clientSecret"), "clientSecret is required for this tokenEndpointAuthType");
        }
    }
}

fn plan_skills(p: &mut Planner, sent: &[super::input::SkillRefInput]) -> Vec<SkillRef> {
    let mut seen = HashSet::new();
    let mut skills = Vec::new();
    for (i, s) in sent.iter().enumerate() {
        let at = format!("config.managedAgent.skills[{i}]");
        let version = s.version.clone().into_option().map(|v| v.0);
        if !seen.insert((s.skill_type, s.skill_id.0.clone())) {
            p.error(&format!("{at}.skillId"), format!("{} appears twice", s.skill_id.0));
        }
        if s.skill_type == SkillType::Custom {
            let current = Uuid::parse_str(&s.skill_id.0).ok().and_then(|id| p.ctx.skills.get(&id).copied());
            match current {
                None => p.error(&format!("{at}.skillId"), "no such skill in the workspace"),
                Some(current) => {
                    if let Some(v) = &version
                        && !v.parse::<i64>().is_ok_and(|n| (1..=current).contains(&n))
                    {
                        p.error(&format!("{at}.version"), format!("version must be a number from 1 to {current}"));
                    }
                }
            }
        }
        skills.push(SkillRef { skill_id: s.skill_id.0.clone(), skill_type: s.skill_type, version });
    }
    skills
}

#[cfg(test)]
mod tests;
