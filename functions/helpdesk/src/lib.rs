//! The `helpdesk` function: the workspace's mail accounts and their helpdesk settings (spec
//! §2.6, §3, §4.9; docs/helpdesk.md): list, get, disable (settings kept, removed from
//! automatic pulling), enable (settings restored, back in the schedule), update the settings.

pub mod account;
pub mod references;
pub mod store;

use account::{EmailAccount, MAX_TASK_TAGS, MailAccountRecord, SettingsChange, TaskPriority};
use axum::Json;
use axum::extract::State;
use axum::response::Response;
use serde::Deserialize;
use std::collections::HashSet;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;
use workapi_domain::permissions::{Requirement, key};
use workapi_kit::conditional::{IfMatch, IfMatchParams, with_etag};
use workapi_kit::entity::Entity;
use workapi_kit::events::{Emits, Event, types};
use workapi_kit::function::{Function, Needs, Route};
use workapi_kit::input::{EditorText, Input, List, Patch};
use workapi_kit::openapi::ApiTag;
use workapi_kit::paging::{PageParams, Paged, Paging};
use workapi_kit::request::{Body, Path};
use workapi_kit::{ApiError, ApiResult, AppState, Caller};

pub const FUNCTION: Function = Function {
    name: "helpdesk",
    prefixes: &["/helpdesk"],
    tags: &[ApiTag {
        name: "helpdesk",
        description: "Helpdesk mail accounts: list, read, enable and disable helpdesk, change its settings",
    }],
    api,
    entities: &[MailAccountRecord::KIND],
    emits: &[
        Emits { operation: "disableHelpdesk", events: &[types::HELPDESK_ACCOUNT_DISABLED] },
        Emits { operation: "enableHelpdesk", events: &[types::HELPDESK_ACCOUNT_ENABLED] },
        Emits { operation: "updateHelpdeskSettings", events: &[types::HELPDESK_ACCOUNT_UPDATED] },
    ],
    needs: Needs {
        summary: "mail accounts, helpdesk settings, automatic pulling",
        routes: &[Route::new("Helpdesk", "/helpdesk/{proxy+}")],
        ..Needs::DATA
    },
};

fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_accounts))
        .routes(routes!(get_account))
        .routes(routes!(disable_account))
        .routes(routes!(enable_account))
        .routes(routes!(update_settings))
}

/// Every helpdesk operation manages workspace configuration (spec §4.9).
const MANAGE: Requirement = Requirement::Permission(key::WS_SETTINGS_MANAGE_SETTINGS);

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[serde(rename_all = "camelCase")]
struct AccountPath {
    /// Email account id
    #[param(example = "6c1f8a2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b")]
    account_id: Uuid,
}

/// A change of an account's helpdesk settings: absent fields are kept; a task field set to
/// null inherits the workspace default.
#[derive(Input)]
#[input(example = serde_json::json!({"sendDefaultReply": true,
    "defaultReplyBody": "<p>Thank you, we will answer within <strong>one business day</strong>.</p>",
    "taskPriority": "High", "taskAssignedId": null}))]
struct HelpdeskSettingsBody {
    /// Answer every new mail with `defaultReplyBody`
    send_default_reply: Option<bool>,
    /// The automatic reply
    default_reply_body: Option<EditorText>,
    /// Priority of created tasks; null inherits
    task_priority: Patch<TaskPriority>,
    /// A project of the workspace; null inherits
    task_project_id: Patch<Uuid>,
    /// Status of created tasks; null inherits
    task_status_id: Patch<Uuid>,
    /// Type of created tasks; null inherits
    task_type_id: Patch<Uuid>,
    /// An active employee of the workspace; null inherits
    task_assigned_id: Patch<Uuid>,
    /// An active employee of the workspace; null inherits
    task_accountable_id: Patch<Uuid>,
    /// Live task tags of the workspace, each once; null inherits, [] means none
    task_tags_ids: Patch<List<Uuid, MAX_TASK_TAGS>>,
}

impl HelpdeskSettingsBody {
    fn into_change(self) -> SettingsChange {
        let tags = match self.task_tags_ids {
            Patch::Absent => Patch::Absent,
            Patch::Null => Patch::Null,
            Patch::Value(List(ids)) => Patch::Value(ids),
        };
        SettingsChange {
            send_default_reply: self.send_default_reply,
            default_reply_body: self.default_reply_body.map(EditorText::into_doc),
            task_priority: self.task_priority,
            task_project_id: self.task_project_id,
            task_status_id: self.task_status_id,
            task_type_id: self.task_type_id,
            task_assigned_id: self.task_assigned_id,
            task_accountable_id: self.task_accountable_id,
            task_tags_ids: tags,
        }
    }
}

/// What a change names (only the values it sets), for the reference check.
fn references_of(change: &SettingsChange) -> references::References {
    let value = |patch: &Patch<Uuid>| match patch {
        Patch::Value(id) => Some(*id),
        Patch::Absent | Patch::Null => None,
    };
    references::References {
        task_project_id: value(&change.task_project_id),
        task_assigned_id: value(&change.task_assigned_id),
        task_accountable_id: value(&change.task_accountable_id),
        task_tags_ids: match &change.task_tags_ids {
            Patch::Value(ids) => ids.clone(),
            Patch::Absent | Patch::Null => Vec::new(),
        },
    }
}

/// List email accounts
///
/// The workspace's mail accounts by address, each with its helpdesk settings while helpdesk
/// is enabled for it.
#[utoipa::path(get, path = "/helpdesk/email-accounts", operation_id = "listEmailAccounts", tag = "helpdesk", params(PageParams),
    responses((status = 200, description = "The mail accounts, by address", body = [EmailAccount])))]
async fn list_accounts(
    State(state): State<AppState>,
    caller: Caller,
    paging: Paging,
) -> ApiResult<Paged<EmailAccount>> {
    caller.authorize(MANAGE)?;
    let accounts = store::list(state.store(), caller.keys()).await?;
    paging.window(accounts, store::order)?.map(|a| a.view()).answer()
}

/// Get an email account
///
/// One mail account; `settings` is present only while helpdesk is enabled for it.
#[utoipa::path(get, path = "/helpdesk/email-accounts/{accountId}", operation_id = "getEmailAccount",
    tag = "helpdesk", params(AccountPath),
    responses((status = 200, description = "The mail account", body = EmailAccount)))]
async fn get_account(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<AccountPath>,
) -> ApiResult<Json<EmailAccount>> {
    caller.authorize(MANAGE)?;
    let record = store::get(state.store(), caller.keys(), path.account_id)
        .await?
        .ok_or_else(|| ApiError::not_found("Email account not found"))?;
    Ok(Json(record.view()))
}

/// Disable helpdesk for an email account
///
/// Stops mail pulling and task creation for the account and removes it from automatic
/// pulling. Its settings overrides are kept (and come back on enabling) but are absent from
/// the response while disabled. Disabling a disabled account changes nothing and answers the
/// same.
#[utoipa::path(delete, path = "/helpdesk/email-accounts/{accountId}/disable", operation_id = "disableHelpdesk",
    tag = "helpdesk", params(AccountPath, IfMatchParams),
    responses((status = 200, description = "The account, helpdesk disabled (no settings)", body = EmailAccount,
        example = json!({"id": "6c1f8a2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b", "email": "support@demo.example",
            "displayName": "Demo Support", "helpdeskEnabled": false}))))]
async fn disable_account(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<AccountPath>,
    if_match: IfMatch,
) -> ApiResult<Response> {
    caller.authorize(MANAGE)?;
    let event =
        |account: &EmailAccount| Event::new(&caller, types::HELPDESK_ACCOUNT_DISABLED, account.id).completion(account);
    let account =
        store::set_enabled(state.store(), caller.keys(), path.account_id, false, &if_match, &event).await?.view();
    with_etag(&account, Json(&account))
}

/// Enable helpdesk for an email account
///
/// Turns helpdesk back on: the account returns to automatic pulling with exactly the
/// settings it had when disabled. Enabling an enabled account changes nothing and answers the
/// same.
#[utoipa::path(post, path = "/helpdesk/email-accounts/{accountId}/enable", operation_id = "enableHelpdesk",
    tag = "helpdesk", params(AccountPath, IfMatchParams),
    responses((status = 200, description = "The account, helpdesk enabled, with its settings", body = EmailAccount)))]
async fn enable_account(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<AccountPath>,
    if_match: IfMatch,
) -> ApiResult<Response> {
    caller.authorize(MANAGE)?;
    let event =
        |account: &EmailAccount| Event::new(&caller, types::HELPDESK_ACCOUNT_ENABLED, account.id).completion(account);
    let account =
        store::set_enabled(state.store(), caller.keys(), path.account_id, true, &if_match, &event).await?.view();
    with_etag(&account, Json(&account))
}

/// Change an email account's helpdesk settings
///
/// Changes the given settings of a helpdesk-enabled account (absent fields are kept; a task
/// field set to null inherits the workspace default). Project, users and tags must exist in
/// the workspace. A disabled account is 409: enable it first.
#[utoipa::path(patch, path = "/helpdesk/email-accounts/{accountId}/settings", operation_id = "updateHelpdeskSettings",
    tag = "helpdesk", params(AccountPath, IfMatchParams), request_body = HelpdeskSettingsBody,
    responses((status = 200, description = "The account with its new settings", body = EmailAccount)))]
async fn update_settings(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<AccountPath>,
    if_match: IfMatch,
    body: Body<HelpdeskSettingsBody>,
) -> ApiResult<Response> {
    let permit = caller.authorize(MANAGE)?;
    let change = body.parse(&permit)?.into_change();
    let store = state.store();
    // The account first: a missing one is 404 whatever the body names.
    if store::get(store, caller.keys(), path.account_id).await?.is_none() {
        return Err(ApiError::not_found("Email account not found"));
    }
    let problems = references::problems(store, caller.keys(), &references_of(&change), &HashSet::new()).await?;
    if !problems.is_empty() {
        return Err(ApiError::validation(problems));
    }
    let event =
        |account: &EmailAccount| Event::new(&caller, types::HELPDESK_ACCOUNT_UPDATED, account.id).completion(account);
    let account =
        store::update_settings(store, caller.keys(), path.account_id, change, &if_match, &event).await?.view();
    with_etag(&account, Json(&account))
}
