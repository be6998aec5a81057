//! Helpdesk mail accounts (spec §2.6, §3): the stored record, the response, the settings
//! overrides and how a change applies to them, as plain types and functions.
//!
//! The record always keeps its settings overrides; the response shows them only while
//! helpdesk is enabled ("settings is undefined in the response" when disabled), so disabling
//! and enabling again gives back exactly the settings that were there.

use serde::{Deserialize, Serialize};
use uuid::Uuid;
use workapi_kit::entity::{Entity, IndexKey, Versioned};
use workapi_kit::input::Patch;
use workapi_richtext::{self as richtext, Doc};
use workapi_store::Key;
use workapi_store::keys::WsKeys;

/// The default priority of tasks created from an account's mail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub enum TaskPriority {
    Low,
    Medium,
    High,
    Urgent,
}

workapi_wire::closed_enum!(TaskPriority);

/// Most tags a helpdesk account may put on its tasks.
pub const MAX_TASK_TAGS: usize = 50;

/// The settings overrides as stored. Task fields left null inherit the workspace defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredSettings {
    pub send_default_reply: bool,
    pub default_reply_body: Doc,
    pub task_priority: Option<TaskPriority>,
    pub task_project_id: Option<Uuid>,
    pub task_status_id: Option<Uuid>,
    pub task_type_id: Option<Uuid>,
    pub task_assigned_id: Option<Uuid>,
    pub task_accountable_id: Option<Uuid>,
    pub task_tags_ids: Option<Vec<Uuid>>,
}

impl Default for StoredSettings {
    /// A new account: no automatic reply, every task field inherited.
    fn default() -> Self {
        StoredSettings {
            send_default_reply: false,
            default_reply_body: Doc::empty(),
            task_priority: None,
            task_project_id: None,
            task_status_id: None,
            task_type_id: None,
            task_assigned_id: None,
            task_accountable_id: None,
            task_tags_ids: None,
        }
    }
}

/// A change of the settings: absent keeps, null inherits (task fields), a value replaces.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SettingsChange {
    pub send_default_reply: Option<bool>,
    pub default_reply_body: Option<Doc>,
    pub task_priority: Patch<TaskPriority>,
    pub task_project_id: Patch<Uuid>,
    pub task_status_id: Patch<Uuid>,
    pub task_type_id: Patch<Uuid>,
    pub task_assigned_id: Patch<Uuid>,
    pub task_accountable_id: Patch<Uuid>,
    pub task_tags_ids: Patch<Vec<Uuid>>,
}

impl StoredSettings {
    pub fn apply(self, change: SettingsChange) -> StoredSettings {
        StoredSettings {
            send_default_reply: change.send_default_reply.unwrap_or(self.send_default_reply),
            default_reply_body: change.default_reply_body.unwrap_or(self.default_reply_body),
            task_priority: change.task_priority.apply(self.task_priority),
            task_project_id: change.task_project_id.apply(self.task_project_id),
            task_status_id: change.task_status_id.apply(self.task_status_id),
            task_type_id: change.task_type_id.apply(self.task_type_id),
            task_assigned_id: change.task_assigned_id.apply(self.task_assigned_id),
            task_accountable_id: change.task_accountable_id.apply(self.task_accountable_id),
            task_tags_ids: change.task_tags_ids.apply(self.task_tags_ids),
        }
    }
}

/// The stored mail account.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MailAccountRecord {
    pub id: Uuid,
    pub email: String,
    pub display_name: String,
    pub helpdesk_enabled: bool,
    /// Kept while helpdesk is disabled, so enabling restores them.
    pub settings: StoredSettings,
    pub version: i64,
}

/// The GSI1 partition of the automatic-pulling schedule: every helpdesk-enabled account of
/// every workspace (the mail puller's one query). An account is in it exactly while helpdesk is
/// enabled: the index keys are written with the record, and a disabled record has none.
pub const PULL_SCHEDULE_GSI1PK: &str = "MAILPULL";

impl Entity for MailAccountRecord {
    const TYPE: &'static str = "MailAccount";
    const PREFIX: &'static str = "MAILACCT#";
    type Scope = WsKeys;

    fn key(&self, keys: WsKeys) -> Key {
        key(keys, self.id)
    }

    fn gsi1(&self, keys: WsKeys) -> Option<IndexKey> {
        self.helpdesk_enabled.then(|| IndexKey {
            pk: PULL_SCHEDULE_GSI1PK.to_owned(),
            sk: format!("{}#{}", keys.workspace_id(), self.id),
        })
    }
}

impl Versioned for MailAccountRecord {
    fn version(&self) -> i64 {
        self.version
    }
    fn set_version(&mut self, version: i64) {
        self.version = version;
    }
}

pub fn key(keys: WsKeys, id: Uuid) -> Key {
    keys.root(format!("{}{id}", MailAccountRecord::PREFIX))
}

/// A helpdesk mail account as the API returns it (spec §2.6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(examples(json!({"id": "6c1f8a2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b", "email": "support@demo.example",
    "displayName": "Demo Support", "helpdeskEnabled": true, "settings": {
        "emailAccountId": "6c1f8a2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b", "emailAddress": "support@demo.example",
        "emailDisplayName": "Demo Support", "isEnabled": true, "sendDefaultReply": true,
        "defaultReplyBody": "<p>Thank you, we will answer within one business day.</p>", "taskPriority": "High",
        "taskProjectId": "626c370a-344a-4ee9-834b-046e0ce1c3e4", "taskStatusId": null, "taskTypeId": null,
        "taskAssignedId": null, "taskAccountableId": null, "taskTagsIds": null}})))]
pub struct EmailAccount {
    pub id: Uuid,
    pub email: String,
    pub display_name: String,
    pub helpdesk_enabled: bool,
    /// Present only while helpdesk is enabled for the account
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settings: Option<EmailAccountSettings>,
}

/// An account's helpdesk settings. Task fields that are null inherit the workspace defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EmailAccountSettings {
    pub email_account_id: Uuid,
    pub email_address: String,
    pub email_display_name: String,
    /// Helpdesk (mail pulling and task creation) is on for the account
    pub is_enabled: bool,
    /// Answer every new mail with `defaultReplyBody`
    pub send_default_reply: bool,
    /// HTML
    pub default_reply_body: String,
    #[schema(required)]
    pub task_priority: Option<TaskPriority>,
    #[schema(required)]
    pub task_project_id: Option<Uuid>,
    #[schema(required)]
    pub task_status_id: Option<Uuid>,
    #[schema(required)]
    pub task_type_id: Option<Uuid>,
    #[schema(required)]
    pub task_assigned_id: Option<Uuid>,
    #[schema(required)]
    pub task_accountable_id: Option<Uuid>,
    #[schema(required)]
    pub task_tags_ids: Option<Vec<Uuid>>,
}

impl MailAccountRecord {
    /// The response: settings only while helpdesk is enabled.
    pub fn view(&self) -> EmailAccount {
        let s = &self.settings;
        EmailAccount {
            id: self.id,
            email: self.email.clone(),
            display_name: self.display_name.clone(),
            helpdesk_enabled: self.helpdesk_enabled,
            settings: self.helpdesk_enabled.then(|| EmailAccountSettings {
                email_account_id: self.id,
                email_address: self.email.clone(),
                email_display_name: self.display_name.clone(),
                is_enabled: true,
                send_default_reply: s.send_default_reply,
                default_reply_body: richtext::to_html(&s.default_reply_body),
                task_priority: s.task_priority,
                task_project_id: s.task_project_id,
                task_status_id: s.task_status_id,
                task_type_id: s.task_type_id,
                task_assigned_id: s.task_assigned_id,
                task_accountable_id: s.task_accountable_id,
                task_tags_ids: s.task_tags_ids.clone(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(enabled: bool) -> MailAccountRecord {
        MailAccountRecord {
            id: Uuid::from_u128(7),
            email: "support@x.example".into(),
            display_name: "Support".into(),
            helpdesk_enabled: enabled,
            settings: StoredSettings {
                task_priority: Some(TaskPriority::High),
                task_tags_ids: Some(vec![Uuid::from_u128(1)]),
                ..StoredSettings::default()
            },
            version: 1,
        }
    }

    #[test]
    fn settings_show_only_while_enabled_and_the_schedule_holds_only_enabled_accounts() {
        let keys = WsKeys::new(Uuid::from_u128(9));
        let on = record(true);
        let view = on.view();
        let settings = view.settings.expect("enabled: settings shown");
        assert_eq!((settings.is_enabled, settings.task_priority), (true, Some(TaskPriority::High)));
        assert_eq!(settings.default_reply_body, "<p></p>");
        assert_eq!(on.gsi1(keys).map(|i| i.pk), Some(PULL_SCHEDULE_GSI1PK.to_owned()));
        let off = record(false);
        assert_eq!(off.view().settings, None);
        assert_eq!(off.gsi1(keys), None);
        let json = serde_json::to_value(off.view()).unwrap();
        assert!(json.get("settings").is_none(), "absent, not null: {json}");
    }

    #[test]
    fn a_change_keeps_absent_fields_inherits_nulls_and_replaces_values() {
        let project = Uuid::from_u128(3);
        let change = SettingsChange {
            send_default_reply: Some(true),
            task_priority: Patch::Null,
            task_project_id: Patch::Value(project),
            ..SettingsChange::default()
        };
        let after = record(true).settings.apply(change);
        assert!(after.send_default_reply);
        assert_eq!((after.task_priority, after.task_project_id), (None, Some(project)));
        assert_eq!(after.task_tags_ids, Some(vec![Uuid::from_u128(1)]), "absent: kept");
    }
}
