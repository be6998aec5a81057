//! The references a helpdesk account's settings make: the task project, the assignee and the
//! accountable user, and the task tags must exist in the account's workspace (a null field
//! inherits the workspace default and names nothing). Used by the settings update and by the
//! operator seed, so both refuse the same things.
//!
//! `taskStatusId` and `taskTypeId` are not checked: the API has no task statuses or types to
//! check them against yet (docs/helpdesk.md).

use crate::account::StoredSettings;
use std::collections::HashSet;
use uuid::Uuid;
use workapi_domain::identity::is_employee;
use workapi_domain::identity::{self, UserKind};
use workapi_domain::permissions::PermissionSet;
use workapi_domain::project;
use workapi_domain::tag::{self, TagType};
use workapi_kit::ApiResult;
use workapi_kit::error::FieldErrors;
use workapi_store::Store;
use workapi_store::keys::WsKeys;

/// What a settings value names.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct References {
    pub task_project_id: Option<Uuid>,
    pub task_assigned_id: Option<Uuid>,
    pub task_accountable_id: Option<Uuid>,
    pub task_tags_ids: Vec<Uuid>,
}

impl References {
    /// Everything whole settings name (the seed checks every entry whole).
    pub fn of(settings: &StoredSettings) -> References {
        References {
            task_project_id: settings.task_project_id,
            task_assigned_id: settings.task_assigned_id,
            task_accountable_id: settings.task_accountable_id,
            task_tags_ids: settings.task_tags_ids.clone().unwrap_or_default(),
        }
    }
}

/// Every reference that names nothing in the workspace, by field. `also_projects` are
/// projects that exist besides the stored ones (those of the seed file being loaded).
pub async fn problems(
    store: &dyn Store,
    keys: WsKeys,
    refs: &References,
    also_projects: &HashSet<Uuid>,
) -> ApiResult<FieldErrors> {
    let mut errors = FieldErrors::new();
    let mut add = |field: &str, message: String| errors.entry(field.to_owned()).or_default().push(message);
    if let Some(id) = refs.task_project_id
        && !also_projects.contains(&id)
        && project::get(store, keys, id).await?.is_none()
    {
        add("taskProjectId", format!("taskProjectId: no project {id} in this workspace"));
    }
    for (field, id) in [("taskAssignedId", refs.task_assigned_id), ("taskAccountableId", refs.task_accountable_id)] {
        let Some(id) = id else { continue };
        match identity::get_user(store, keys.workspace_id(), id).await? {
            Some(user) if user.is_active && user.kind == UserKind::Employee => {
                // A guest role's holder is never an employee (docs/permissions.md), whatever
                // the user record's kind says: tasks are not assigned to external users.
                if !is_employee(user.kind, &PermissionSet::of_role(store, keys, &user.role_id).await?) {
                    add(field, format!("{field}: {id} holds a guest role; only employees take tasks"));
                }
            }
            _ => add(field, format!("{field}: no active employee {id} in this workspace")),
        }
    }
    let mut seen = HashSet::new();
    for (i, id) in refs.task_tags_ids.iter().enumerate() {
        if !seen.insert(*id) {
            add("taskTagsIds", format!("taskTagsIds[{i}]: {id} appears twice"));
        } else if !tag::is_live(store, (keys, TagType::Task), *id).await? {
            add("taskTagsIds", format!("taskTagsIds[{i}]: no task tag {id} in this workspace"));
        }
    }
    Ok(errors)
}
