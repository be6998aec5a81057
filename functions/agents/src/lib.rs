//! The `agents` function (spec §2.9, §4.11; docs/agents.md): agents and their managed-provider
//! settings, whose credentials live in the secret store (`workapi_kit::secrets`) and are never
//! returned; project-level overrides; workspace skills.

pub mod fields;
pub mod managed;
pub mod project_settings;
pub mod records;
pub mod skills;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use managed::input::SaveManagedProviderBody;
use managed::model::{ManagedProviderRecord, ManagedProviderSettings, ManagedProviderSettingsProjection};
use project_settings::{
    ProjectAgentProviderSettings, ProjectAgentProviderSettingsProjection, SaveProjectOverridesBody,
};
use records::{Agent, ProviderApiKey, ProviderApiKeyView};
use serde::Deserialize;
use skills::{CreateSkillBody, PatchSkillBody, Skill, SkillProjection, SkillRecord};
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;
use workapi_domain::permissions::{Requirement, key};
use workapi_domain::project;
use workapi_kit::conditional::{IfMatch, IfMatchParams, with_etag};
use workapi_kit::entity::Entity;
use workapi_kit::events::{Emits, Event, types};
use workapi_kit::function::{Function, Grant, Needs, Resource, Route};
use workapi_kit::idempotency::{Answer, Idempotency, idempotent};
use workapi_kit::openapi::ApiTag;
use workapi_kit::paging::{OrderKey, PageParams, Paged, Paging};
use workapi_kit::projection::Projection;
use workapi_kit::request::{Body, Path, Query};
use workapi_kit::secrets::SecretStore;
use workapi_kit::{ApiError, ApiResult, AppState, Caller};

pub const FUNCTION: Function = Function {
    name: "agents",
    prefixes: &["/agents"],
    tags: &[ApiTag {
        name: "agents",
        description: "AI agents: managed hosted-agent provider settings (credentials write-only), project-level \
                      overrides and shared workspace skills",
    }],
    api,
    entities: &[
        Agent::KIND,
        ProviderApiKey::KIND,
        SkillRecord::KIND,
        skills::SkillCount::KIND,
        ManagedProviderRecord::KIND,
        project_settings::ProjectOverridesRecord::KIND,
    ],
    emits: &[
        Emits { operation: "saveAgentManagedProvider", events: &[types::AGENT_MANAGED_PROVIDER_SAVED] },
        Emits {
            operation: "saveProjectAgentProviderSettings",
            events: &[types::PROJECT_AGENT_PROVIDER_SETTINGS_SAVED],
        },
        Emits { operation: "createAgentSkill", events: &[types::AGENT_SKILL_CREATED] },
        Emits { operation: "updateAgentSkill", events: &[types::AGENT_SKILL_UPDATED] },
    ],
    needs: Needs {
        summary: "managed-provider settings with secrets in Secrets Manager, project overrides, skills",
        note: "Agents (docs/agents.md). Its credentials (raw provider keys, MCP bearer tokens, OAuth\n\
               tokens and client secrets) live in Secrets Manager, one secret per value, named\n\
               workapi/<stack>/agents/<workspace>/...; the table keeps only the names. This function alone\n\
               may create and delete them (it never reads one back: responses say only whether a credential\n\
               is configured), and only under its own name prefix.",
        routes: &[Route::new("Agents", "/agents"), Route::new("AgentsProxy", "/agents/{proxy+}")],
        grants: &[Grant {
            sid: "AgentCredentialSecrets",
            actions: &["secretsmanager:CreateSecret", "secretsmanager:DeleteSecret"],
            on: Resource::AgentSecrets,
            note: "",
        }],
        ..Needs::DATA
    },
};

/// Connecting an agent to a provider, and the workspace's skills, are workspace settings.
const MANAGE: Requirement = Requirement::Permission(key::WS_SETTINGS_MANAGE_SETTINGS);
/// Project overrides change how agents work in one project.
const EDIT_PROJECT: Requirement = Requirement::Permission(key::PROJECTS_EDIT);

fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_agents))
        .routes(routes!(list_provider_api_keys))
        .routes(routes!(get_managed_provider))
        .routes(idempotent(routes!(save_managed_provider)))
        .routes(idempotent(routes!(save_project_overrides)))
        .routes(routes!(list_project_overrides))
        .routes(idempotent(routes!(create_skill)))
        .routes(routes!(list_skills))
        .routes(routes!(get_skill, patch_skill))
}

fn secret_store(state: &AppState) -> ApiResult<&dyn SecretStore> {
    state.secrets().ok_or_else(|| ApiError::internal("the agents function has no secret store (SECRETS_PREFIX)"))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
struct AgentPath {
    /// Agent id
    #[param(example = "6b1f3c2a-4d5e-4f60-8a7b-9c0d1e2f3a4b")]
    id: Uuid,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[serde(rename_all = "camelCase")]
struct SkillPath {
    /// Skill id
    #[param(example = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d")]
    skill_id: Uuid,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct ProjectFilter {
    /// The project whose overrides to list (a project the caller may access)
    #[param(example = "01e53df4-07b4-4a44-8242-85272b83de6a")]
    project_id: Uuid,
}

/// List agents
///
/// The workspace's agents, ordered by name, each saying whether managed-provider settings
/// are saved for it. For employees of the workspace.
#[utoipa::path(get, path = "/agents", operation_id = "listAgents", tag = "agents", params(PageParams),
    responses((status = 200, description = "The agents, ordered by name", body = [Agent])))]
async fn list_agents(State(state): State<AppState>, caller: Caller, paging: Paging) -> ApiResult<Paged<Agent>> {
    caller.authorize(Requirement::Employee)?;
    let store = state.store();
    let (agents, settings) = tokio::join!(
        records::list::<Agent>(store, caller.keys()),
        records::list::<ManagedProviderRecord>(store, caller.keys())
    );
    let configured: std::collections::HashSet<Uuid> = settings?.iter().map(|s| s.agent_id).collect();
    let mut agents = agents?;
    for agent in &mut agents {
        agent.managed_provider_configured = configured.contains(&agent.id);
    }
    paging.window(agents, |a| OrderKey::new().name(&a.name).id(a.id))?.answer()
}

/// List saved provider API keys
///
/// The provider keys saved in the workspace (their ids go in `providerApiKeyId`), with their
/// labels and, for long keys, the last four characters. The keys themselves are never returned.
#[utoipa::path(get, path = "/agents/provider-api-keys", operation_id = "listProviderApiKeys", tag = "agents", params(PageParams),
    responses((status = 200, description = "The saved keys, ordered by label", body = [ProviderApiKeyView])))]
async fn list_provider_api_keys(
    State(state): State<AppState>,
    caller: Caller,
    paging: Paging,
) -> ApiResult<Paged<ProviderApiKeyView>> {
    caller.authorize(MANAGE)?;
    let keys = records::list::<ProviderApiKey>(state.store(), caller.keys()).await?;
    let keys = keys.into_iter().map(ProviderApiKeyView::from);
    paging.window(keys, |k| OrderKey::new().name(&k.label).id(k.id))?.answer()
}

/// Read an agent's managed-provider settings
///
/// The settings as saved, every credential redacted: `credentialConfigured` says whether a
/// credential is stored, `vendorApiKeyLastFour` shows the last four characters of a long raw
/// key. 404 when the agent does not exist or has no saved settings.
#[utoipa::path(get, path = "/agents/{id}/managed-provider", operation_id = "getAgentManagedProvider", tag = "agents",
    params(AgentPath),
    responses((status = 200, description = "The saved settings, credentials redacted", body = ManagedProviderSettings)))]
async fn get_managed_provider(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<AgentPath>,
) -> ApiResult<Json<ManagedProviderSettings>> {
    caller.authorize(MANAGE)?;
    let record = managed::read(state.store(), caller.keys(), path.id).await?;
    Ok(Json(ManagedProviderSettings::from(&record)))
}

/// Save an agent's managed-provider settings
///
/// Connects the agent to a managed hosted-agent provider. Prefer `providerApiKeyId` (a saved
/// key) over a raw `vendorApiKey`. Credentials (the raw key, MCP bearer tokens, OAuth tokens
/// and client secrets) are stored in the secret store, never returned: leave one out to keep
/// the stored value, send null to clear it. The rest of `config` is replaced as sent. Re-read
/// the settings (GET) to verify them.
#[utoipa::path(post, path = "/agents/{id}/managed-provider", operation_id = "saveAgentManagedProvider", tag = "agents",
    params(AgentPath), request_body = SaveManagedProviderBody,
    responses((status = 201, description = "The saved settings, credentials redacted", body = ManagedProviderSettingsProjection)))]
async fn save_managed_provider(
    State(state): State<AppState>,
    caller: Caller,
    projection: Projection,
    Path(path): Path<AgentPath>,
    idempotency: Idempotency,
    body: Body<SaveManagedProviderBody>,
) -> ApiResult<Answer> {
    let permit = caller.authorize(MANAGE)?;
    let body = body.parse(&permit)?;
    let secrets = secret_store(&state)?;
    let respond = |record: &ManagedProviderRecord| {
        let settings = ManagedProviderSettings::from(record);
        let answer = idempotency.answer_resource(StatusCode::CREATED, &settings, &projection.project(&settings)?)?;
        // The settings as answered: credentials redacted, never in an event.
        Ok(answer.with_event(Event::new(&caller, types::AGENT_MANAGED_PROVIDER_SAVED, path.id).op(&settings)?))
    };
    managed::save(state.store(), secrets, caller.keys(), path.id, &body, caller.user.id, respond).await
}

/// Save a project's agent overrides
///
/// Saves, for one project and one agent, the managed-provider settings the project changes:
/// `enabled`, `toolMode`, `allowNetworkAccess`, `customGuidance`, `modelId`, `userVaultIds`
/// and `githubRepositoryDefaults`. The whole set is replaced; a field left out or null
/// inherits the agent's setting. Credentials are never overridden per project. Needs
/// Projects.edit and access to the project.
#[utoipa::path(post, path = "/agents/project-agent-provider-settings", operation_id = "saveProjectAgentProviderSettings",
    tag = "agents", request_body = SaveProjectOverridesBody,
    responses((status = 201, description = "The saved overrides", body = ProjectAgentProviderSettingsProjection)))]
async fn save_project_overrides(
    State(state): State<AppState>,
    caller: Caller,
    projection: Projection,
    idempotency: Idempotency,
    body: Body<SaveProjectOverridesBody>,
) -> ApiResult<Answer> {
    let permit = caller.authorize(EDIT_PROJECT)?;
    let body = body.parse(&permit)?;
    let store = state.store();
    project::accessible(store, caller.viewer(), body.project_id).await?;
    let (project_id, agent_id) = (body.project_id, body.agent_id);
    let values = project_settings::overrides(body).map_err(ApiError::validation)?;
    let respond = |saved: &ProjectAgentProviderSettings| {
        let answer = idempotency.answer_resource(StatusCode::CREATED, saved, &projection.project(saved)?)?;
        // One resource per project and agent: named by both.
        let id = format!("{project_id}:{agent_id}");
        let event = Event::new(&caller, types::PROJECT_AGENT_PROVIDER_SETTINGS_SAVED, id).in_project(project_id);
        Ok(answer.with_event(event.op(saved)?))
    };
    project_settings::save(store, caller.keys(), project_id, agent_id, values, caller.user.id, respond).await
}

/// List a project's agent overrides
///
/// The overrides saved for the project, one per agent. Needs access to the project.
#[utoipa::path(get, path = "/agents/project-agent-provider-settings", operation_id = "listProjectAgentProviderSettings",
    tag = "agents", params(ProjectFilter, PageParams),
    responses((status = 200, description = "The project's overrides", body = [ProjectAgentProviderSettings])))]
async fn list_project_overrides(
    State(state): State<AppState>,
    caller: Caller,
    Query(filter): Query<ProjectFilter>,
    paging: Paging,
) -> ApiResult<Paged<ProjectAgentProviderSettings>> {
    caller.authorize(Requirement::Member)?;
    let store = state.store();
    project::accessible(store, caller.viewer(), filter.project_id).await?;
    let overrides = project_settings::list(store, caller.keys(), filter.project_id).await?;
    // By agent, as the store keeps them.
    paging.window(overrides, |o| OrderKey::new().id(o.agent_id))?.answer()
}

/// Create a skill
///
/// Creates a shared workspace skill (version 1). Its id is what a managed agent's skill
/// reference of type custom names.
#[utoipa::path(post, path = "/agents/skills", operation_id = "createAgentSkill", tag = "agents",
    request_body = CreateSkillBody,
    responses((status = 201, description = "The new skill", body = SkillProjection)))]
async fn create_skill(
    State(state): State<AppState>,
    caller: Caller,
    projection: Projection,
    idempotency: Idempotency,
    body: Body<CreateSkillBody>,
) -> ApiResult<Answer> {
    let permit = caller.authorize(MANAGE)?;
    let body = body.parse(&permit)?;
    let respond = |record: &SkillRecord| {
        let skill = Skill::from(record);
        let answer = idempotency.answer_resource(StatusCode::CREATED, &skill, &projection.project(&skill)?)?;
        Ok(answer.with_event(Event::new(&caller, types::AGENT_SKILL_CREATED, record.id).op(&skill)?))
    };
    skills::create(state.store(), caller.keys(), body, caller.user.id, respond).await
}

/// List skills
///
/// The workspace's skills, ordered by name. For employees of the workspace.
#[utoipa::path(get, path = "/agents/skills", operation_id = "listAgentSkills", tag = "agents", params(PageParams),
    responses((status = 200, description = "The skills, ordered by name", body = [Skill])))]
async fn list_skills(State(state): State<AppState>, caller: Caller, paging: Paging) -> ApiResult<Paged<Skill>> {
    caller.authorize(Requirement::Employee)?;
    let skills = skills::list(state.store(), caller.keys()).await?;
    paging.window(skills, skills::order)?.map(|s| Skill::from(&s)).answer()
}

/// Read a skill
///
/// One skill of the workspace. For employees of the workspace.
#[utoipa::path(get, path = "/agents/skills/{skillId}", operation_id = "getAgentSkill", tag = "agents",
    params(SkillPath), responses((status = 200, description = "The skill", body = Skill)))]
async fn get_skill(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<SkillPath>,
) -> ApiResult<Json<Skill>> {
    caller.authorize(Requirement::Employee)?;
    Ok(Json(Skill::from(&skills::get(state.store(), caller.keys(), path.skill_id).await?)))
}

/// Update a skill
///
/// Changes only the fields sent; the version grows by one. Concurrent updates never lose a
/// change: each applies to the version it finds (re-read after a lost race). Send `version`
/// to refuse the change (409) when the skill changed since you read it.
#[utoipa::path(patch, path = "/agents/skills/{skillId}", operation_id = "updateAgentSkill", tag = "agents",
    params(SkillPath, IfMatchParams), request_body = PatchSkillBody,
    responses((status = 200, description = "The updated skill", body = SkillProjection)))]
async fn patch_skill(
    State(state): State<AppState>,
    caller: Caller,
    projection: Projection,
    Path(path): Path<SkillPath>,
    if_match: IfMatch,
    body: Body<PatchSkillBody>,
) -> ApiResult<Response> {
    let permit = caller.authorize(MANAGE)?;
    let body = body.parse(&permit)?;
    let event = |skill: &Skill| Event::new(&caller, types::AGENT_SKILL_UPDATED, skill.id).completion(skill);
    let record =
        skills::patch(state.store(), caller.keys(), path.skill_id, body, caller.user.id, &if_match, event).await?;
    let skill = Skill::from(&record);
    with_etag(&skill, projection.project(&skill)?)
}
