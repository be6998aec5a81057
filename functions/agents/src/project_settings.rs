//! Project-level hosted-agent overrides (spec §4.11 shows an untyped object; the shape is ours,
//! docs/agents.md): for one project and one agent, the managed-provider settings a project may
//! change. Every field is optional; null (or absent) inherits the agent's setting. Credentials
//! are never overridden per project: they stay with the agent (and in the secret store).

use crate::fields::Ident;
use crate::managed::input::{MAX_GUIDANCE_CHARS, MAX_REPOSITORIES, MAX_VAULTS, RepositoryInput};
use crate::managed::model::{Repository, ToolMode};
use crate::records::{self, partition};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use uuid::Uuid;
use workapi_kit::entity::{self, Change, Entity, Versioned};
use workapi_kit::error::FieldErrors;
use workapi_kit::idempotency::Answer;
use workapi_kit::input::{Input, List, MultilineText, Patch};
use workapi_kit::{ApiError, ApiResult};
use workapi_store::clock;
use workapi_store::keys::WsKeys;
use workapi_store::{Key, Query, Store, query_all};

/// Overrides of one agent in one project
#[derive(Input)]
#[input(example = serde_json::json!({"projectId": "01e53df4-07b4-4a44-8242-85272b83de6a",
    "agentId": "6b1f3c2a-4d5e-4f60-8a7b-9c0d1e2f3a4b", "enabled": true, "toolMode": "full",
    "customGuidance": "This project's customer prefers formal English.", "githubRepositoryDefaults": null}))]
pub struct SaveProjectOverridesBody {
    /// A project the caller may access
    pub project_id: Uuid,
    /// An agent of the workspace
    pub agent_id: Uuid,
    /// false turns the agent's hosted agent off in this project; null inherits
    pub enabled: Patch<bool>,
    /// Null inherits
    pub tool_mode: Patch<ToolMode>,
    /// Null inherits
    pub allow_network_access: Patch<bool>,
    /// Replaces the agent's custom guidance in this project; null inherits
    pub custom_guidance: Patch<MultilineText<1, MAX_GUIDANCE_CHARS>>,
    /// Replaces the agent's model in this project (serviceManaged agents); null inherits
    pub model_id: Patch<Ident<200>>,
    /// Replaces the agent's vault ids in this project; null inherits
    pub user_vault_ids: Patch<List<Ident<200>, MAX_VAULTS>>,
    /// Replaces the agent's repositories in this project; null inherits
    pub github_repository_defaults: Patch<List<RepositoryInput, MAX_REPOSITORIES>>,
}

/// The stored overrides, as the API returns them (null: inherited from the agent).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(examples(json!({"projectId": "01e53df4-07b4-4a44-8242-85272b83de6a",
    "agentId": "6b1f3c2a-4d5e-4f60-8a7b-9c0d1e2f3a4b", "enabled": true, "toolMode": "full",
    "allowNetworkAccess": null, "customGuidance": "This project's customer prefers formal English.",
    "modelId": null, "userVaultIds": null, "githubRepositoryDefaults": null, "version": 1,
    "updatedAt": "2026-11-23T10:00:00Z"})))]
pub struct ProjectAgentProviderSettings {
    pub project_id: Uuid,
    pub agent_id: Uuid,
    #[schema(required)]
    pub enabled: Option<bool>,
    #[schema(required)]
    pub tool_mode: Option<ToolMode>,
    #[schema(required)]
    pub allow_network_access: Option<bool>,
    #[schema(required)]
    pub custom_guidance: Option<String>,
    #[schema(required)]
    pub model_id: Option<String>,
    #[schema(required)]
    pub user_vault_ids: Option<Vec<String>>,
    #[schema(required)]
    pub github_repository_defaults: Option<Vec<Repository>>,
    /// Grows by one on every save
    pub version: i64,
    #[schema(format = DateTime)]
    pub updated_at: String,
}

impl workapi_kit::projection::Compact for ProjectAgentProviderSettings {
    const COMPACT: &'static [&'static str] = &["projectId", "agentId", "version"];
}

pub type ProjectAgentProviderSettingsProjection = workapi_kit::projection::Projected<ProjectAgentProviderSettings>;

/// The record: the response plus who saved it last.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectOverridesRecord {
    #[serde(flatten)]
    pub settings: ProjectAgentProviderSettings,
    pub updated_by: Uuid,
}

impl Entity for ProjectOverridesRecord {
    const TYPE: &'static str = "ProjectAgentProviderSettings";
    const PREFIX: &'static str = "PROJECTAGENT#";
    type Scope = WsKeys;

    fn key(&self, keys: WsKeys) -> Key {
        overrides_key(keys, self.settings.project_id, self.settings.agent_id)
    }
}

impl Versioned for ProjectOverridesRecord {
    fn version(&self) -> i64 {
        self.settings.version
    }
    fn set_version(&mut self, version: i64) {
        self.settings.version = version;
    }
}

fn project_prefix(project_id: Uuid) -> String {
    format!("{}{project_id}#", ProjectOverridesRecord::PREFIX)
}

pub fn overrides_key(keys: WsKeys, project_id: Uuid, agent_id: Uuid) -> Key {
    Key::new(partition(keys), format!("{}{agent_id}", project_prefix(project_id)))
}

/// The overrides a body states, or every problem of it (by path).
pub fn overrides(body: SaveProjectOverridesBody) -> Result<OverrideValues, FieldErrors> {
    let mut errors = FieldErrors::new();
    let vaults: Option<Vec<String>> = body.user_vault_ids.into_option().map(|l| l.0.into_iter().map(|i| i.0).collect());
    let mut seen = HashSet::new();
    for (i, id) in vaults.iter().flatten().enumerate() {
        if !seen.insert(id) {
            errors.entry(format!("userVaultIds[{i}]")).or_default().push(format!("{id} appears twice"));
        }
    }
    let repositories = body.github_repository_defaults.into_option().map(|list| {
        let mut seen = HashSet::new();
        list.0
            .into_iter()
            .enumerate()
            .map(|(i, r)| {
                if !seen.insert(r.id.0) {
                    errors.entry(format!("githubRepositoryDefaults[{i}].id")).or_default().push("appears twice".into());
                }
                if Some(r.name.as_str()) != r.full_name.0.split_once('/').map(|(_, repo)| repo) {
                    errors
                        .entry(format!("githubRepositoryDefaults[{i}].name"))
                        .or_default()
                        .push("name must be the repository part of fullName".into());
                }
                Repository {
                    id: r.id.0,
                    name: r.name.as_str().to_owned(),
                    full_name: r.full_name.0,
                    private: r.private,
                    url: r.url.0,
                    clone_url: r.clone_url.0.map(|u| u.0),
                }
            })
            .collect()
    });
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(OverrideValues {
        enabled: body.enabled.into_option(),
        tool_mode: body.tool_mode.into_option(),
        allow_network_access: body.allow_network_access.into_option(),
        custom_guidance: body.custom_guidance.into_option().map(|g| g.into_string()),
        model_id: body.model_id.into_option().map(|m| m.0),
        user_vault_ids: vaults,
        github_repository_defaults: repositories,
    })
}

/// The override fields of a save.
#[derive(Debug, Clone, PartialEq)]
pub struct OverrideValues {
    pub enabled: Option<bool>,
    pub tool_mode: Option<ToolMode>,
    pub allow_network_access: Option<bool>,
    pub custom_guidance: Option<String>,
    pub model_id: Option<String>,
    pub user_vault_ids: Option<Vec<String>>,
    pub github_repository_defaults: Option<Vec<Repository>>,
}

/// Replaces the overrides of (project, agent) on the version read (retried after a lost race;
/// a save replaces the whole record, so the last save wins and none is half applied).
/// `respond` turns the saved overrides into the answer, which the record's write records (the
/// idempotency completion, re-added on every attempt).
pub async fn save(
    store: &dyn Store,
    keys: WsKeys,
    project_id: Uuid,
    agent_id: Uuid,
    values: OverrideValues,
    by: Uuid,
    respond: impl Fn(&ProjectAgentProviderSettings) -> ApiResult<Answer>,
) -> ApiResult<Answer> {
    if records::get_agent(store, keys, agent_id).await?.is_none() {
        return Err(ApiError::field("agentId", "no such agent in the workspace"));
    }
    let key = overrides_key(keys, project_id, agent_id);
    let busy = "The project's agent settings are being changed concurrently; retry";
    let save = |_: Option<ProjectOverridesRecord>| {
        let values = values.clone();
        Ok(Change::Write(ProjectOverridesRecord {
            settings: ProjectAgentProviderSettings {
                project_id,
                agent_id,
                enabled: values.enabled,
                tool_mode: values.tool_mode,
                allow_network_access: values.allow_network_access,
                custom_guidance: values.custom_guidance,
                model_id: values.model_id,
                user_vault_ids: values.user_vault_ids,
                github_repository_defaults: values.github_repository_defaults,
                // Set by the write: the next one after what was read.
                version: 0,
                updated_at: clock::now_rfc3339(),
            },
            updated_by: by,
        }))
    };
    entity::modify_answering(store, &key, keys, busy, save, |record| respond(&record.settings)).await
}

/// The overrides saved for a project, ordered by agent id.
pub async fn list(store: &dyn Store, keys: WsKeys, project_id: Uuid) -> ApiResult<Vec<ProjectAgentProviderSettings>> {
    let items = query_all(store, Query::table(partition(keys)).begins_with(project_prefix(project_id))).await?;
    let records: Vec<ProjectOverridesRecord> = items.into_iter().map(entity::from_item).collect::<Result<_, _>>()?;
    Ok(records.into_iter().map(|r| r.settings).collect())
}
