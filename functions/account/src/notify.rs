//! Notifications from events (docs/account.md#notifications-from-events): which events tell
//! whom, in what words, and their writes. The rules are plain functions of the event ([`rule`],
//! [`Subject::message`], [`select`]); [`from_event`] reads what they need (the workspace's
//! users and roles, the project, the actor's name) and writes one notification per recipient.
//!
//! The dispatcher calls [`from_event`] at least once per event, so it is idempotent: a
//! notification's id is derived from the event and the recipient, and its record is written
//! only if absent; a second call writes nothing.

use crate::notifications::{self, Notification};
use rust_decimal::Decimal;
use serde_json::Value;
use sha2::{Digest, Sha256};
use uuid::Uuid;
use workapi_domain::event::{EventRecord, kind, types};
use workapi_domain::identity::{self, User};
use workapi_domain::permissions::{PermissionSet, Roles, key};
use workapi_domain::project::{self, ProjectRecord};
use workapi_domain::{pricing, task};
use workapi_kit::ApiResult;
use workapi_kit::auth::roles_cache;
use workapi_store::keys::WsKeys;
use workapi_store::{Store, clock, read_all};

/// Who an event's notification is for, before the checks every recipient must pass (active,
/// not the actor, may read the resource: [`select`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recipients {
    /// One user: the one who made the resource (a quotation's creator).
    User(Uuid),
    /// Every holder of a permission.
    Holders(&'static str),
    /// Every holder of a role, or of a role inheriting from it.
    RoleHolders(String),
}

/// What a notification says, from the event's data. Every fact is optional: an event whose
/// `data` was too large is recorded as its id only (docs/events.md), and the text then says less.
#[derive(Debug, Clone, PartialEq)]
pub enum Subject {
    QuotationDecided { accepted: bool, number: Option<i64>, total: Option<String>, task_id: Option<Uuid> },
    BillingCreated { title: Option<String> },
    InvoiceIssued { number: Option<String>, total: Option<String> },
    InvoiceCancelled { credit_note: Option<String> },
    HelpdeskDisabled { email: Option<String> },
    RolePermissionsChanged { role: Option<String> },
}

/// What the rules make of one event.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub recipients: Recipients,
    pub subject: Subject,
}

/// The rule of an event: `None` for the events that notify nobody (most of them), and for a
/// quotation decision whose creator the data does not name (a truncated event recorded before
/// truncated data kept `createdBy`).
pub fn rule(event: &EventRecord) -> Option<Rule> {
    let data = &event.payload.data;
    let text = |field: &str| data.get(field).and_then(Value::as_str).map(str::to_owned);
    let uuid = |field: &str| data.get(field).and_then(Value::as_str).and_then(|s| s.parse::<Uuid>().ok());
    let invoice_managers = Recipients::Holders(key::INVOICES_MANAGE);
    let (recipients, subject) = match event.payload.event_type.as_str() {
        name if name == types::EXPRESS_QUOTATION_ACCEPTED.name || name == types::EXPRESS_QUOTATION_REJECTED.name => (
            Recipients::User(uuid("createdBy")?),
            Subject::QuotationDecided {
                accepted: name == types::EXPRESS_QUOTATION_ACCEPTED.name,
                number: data.get("shortNumber").and_then(Value::as_i64),
                total: amount(data),
                task_id: uuid("taskId"),
            },
        ),
        name if name == types::SUBSCRIPTION_BILLING_CREATED.name => {
            (invoice_managers, Subject::BillingCreated { title: text("manualTitle") })
        }
        name if name == types::INVOICE_ISSUED.name => {
            (invoice_managers, Subject::InvoiceIssued { number: text("number"), total: amount(data) })
        }
        name if name == types::INVOICE_CANCELLED.name => {
            (invoice_managers, Subject::InvoiceCancelled { credit_note: text("number") })
        }
        name if name == types::HELPDESK_ACCOUNT_DISABLED.name => {
            (Recipients::Holders(key::WS_SETTINGS_MANAGE_SETTINGS), Subject::HelpdeskDisabled { email: text("email") })
        }
        name if name == types::ROLE_PERMISSIONS_CHANGED.name => {
            (Recipients::RoleHolders(event.resource.id.clone()), Subject::RolePermissionsChanged { role: text("name") })
        }
        _ => return None,
    };
    Some(Rule { recipients, subject })
}

/// `total` and `currency` of the data as text, with the currency's minor units ("1413.13 EUR").
fn amount(data: &Value) -> Option<String> {
    let total: Decimal = workapi_domain::money::deserialize(data.get("total")?).ok()?;
    let currency = data.get("currency")?.as_str()?;
    Some(format!("{:.*} {currency}", pricing::minor_units(currency) as usize, total))
}

/// The names a message uses, read from the store; `None` when not found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Names {
    pub actor: Option<String>,
    pub project: Option<String>,
    pub task: Option<String>,
}

/// Names longer than this are cut (with "…"), so a notification stays short.
const MAX_NAME_CHARS: usize = 60;

/// A name as a message uses it: trimmed, control characters as spaces, at most
/// [`MAX_NAME_CHARS`].
fn short(name: &str) -> String {
    let mut chars = name.trim().chars().map(|c| if c.is_control() { ' ' } else { c });
    let head: String = chars.by_ref().take(MAX_NAME_CHARS).collect();
    if chars.next().is_some() { format!("{head}…") } else { head }
}

/// A name of a thing, in quotation marks.
fn quoted(name: &str) -> String {
    format!("“{}”", short(name))
}

impl Subject {
    /// The notification's title and plain-text body.
    pub fn message(&self, names: &Names) -> (String, String) {
        let who = names.actor.as_deref().map(short).filter(|n| !n.is_empty()).unwrap_or_else(|| "Someone".to_owned());
        let in_project = names.project.as_deref().map(|p| format!(" in {}", quoted(p))).unwrap_or_default();
        let in_parentheses = |text: &Option<String>| text.as_ref().map(|t| format!(" ({t})")).unwrap_or_default();
        let (title, body) = match self {
            Subject::QuotationDecided { accepted, number, total, .. } => {
                let quotation = number.map_or("an express quotation".to_owned(), |n| format!("express quotation #{n}"));
                // On its task; in its project when the task is not found.
                let on_task = names.task.as_deref().map_or(in_project, |t| format!(" on {}", quoted(t)));
                let (title, verb) =
                    if *accepted { ("Quotation accepted", "accepted") } else { ("Quotation rejected", "rejected") };
                (title, format!("{who} {verb} {quotation}{on_task}{}.", in_parentheses(total)))
            }
            Subject::BillingCreated { title } => {
                let billing = title
                    .as_deref()
                    .map_or("a subscription billing".to_owned(), |t| format!("the subscription billing {}", quoted(t)));
                ("New subscription billing", format!("{who} created {billing}{in_project}."))
            }
            Subject::InvoiceIssued { number, total } => {
                let invoice = number.as_deref().map_or("an invoice".to_owned(), |n| format!("invoice {n}"));
                ("Invoice issued", format!("{who} issued {invoice}{in_project}{}.", in_parentheses(total)))
            }
            Subject::InvoiceCancelled { credit_note } => {
                let note = credit_note.as_deref().map(|n| format!(" with credit note {n}")).unwrap_or_default();
                ("Invoice cancelled", format!("{who} cancelled an invoice{in_project}{note}."))
            }
            Subject::HelpdeskDisabled { email } => {
                let account = email.as_deref().map_or("a mail account".to_owned(), short);
                (
                    "Helpdesk disabled",
                    format!("{who} disabled the helpdesk of {account}: its mails no longer become tasks."),
                )
            }
            Subject::RolePermissionsChanged { role } => {
                let role = role.as_deref().map_or("a role".to_owned(), |r| format!("the role {}", quoted(r)));
                (
                    "Your permissions changed",
                    format!("{who} changed the permissions of {role}, your role or one it inherits from."),
                )
            }
        };
        (title.to_owned(), body)
    }

    fn task_id(&self) -> Option<Uuid> {
        match self {
            Subject::QuotationDecided { task_id, .. } => *task_id,
            _ => None,
        }
    }
}

/// Whether `user`, holding `permissions`, may read the resource `event` names: the rule of its
/// kind (docs/events.md, "Who sees which events"), and for a project-bound resource access to
/// the project (`project` is `None` when it no longer exists: nobody may).
fn may_read(event: &EventRecord, user: &User, permissions: &PermissionSet, project: Option<&ProjectRecord>) -> bool {
    event.visible_to(user.id, user.kind, permissions, |_| {
        project.is_some_and(|p| project::may_access(p, user.id, permissions.allows(key::PROJECTS_VIEW_ALL)))
    })
}

/// Who gets the notification: of `users`, those `recipients` names who are active, are not the
/// actor (nor, in imposter mode, the impersonating user), and may read the resource.
pub fn select(
    recipients: &Recipients,
    event: &EventRecord,
    users: &[User],
    roles: &Roles,
    project: Option<&ProjectRecord>,
) -> Vec<Uuid> {
    let actor = &event.actor;
    users
        .iter()
        .filter(|user| user.is_active && user.id != actor.user_id && actor.impersonated_by != Some(user.id))
        .filter(|user| {
            let permissions = PermissionSet::from_roles(roles, &user.role_id);
            let named = match recipients {
                Recipients::User(id) => user.id == *id,
                Recipients::Holders(key) => permissions.allows(key),
                Recipients::RoleHolders(role) => {
                    roles.lineage(&user.role_id).is_ok_and(|chain| chain.iter().any(|r| r.id() == role))
                }
            };
            named && may_read(event, user, &permissions, project)
        })
        .map(|user| user.id)
        .collect()
}

/// A deterministic id (a UUIDv8 of SHA-256 over the length-prefixed parts, RFC 9562 B.2): the
/// same notification gets the same id on every try.
fn derived_id(parts: &[&str]) -> Uuid {
    let mut hash = Sha256::new();
    for part in parts {
        hash.update((part.len() as u64).to_be_bytes());
        hash.update(part.as_bytes());
    }
    let digest = hash.finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    uuid::Builder::from_custom_bytes(bytes).into_uuid()
}

/// The id of `event`'s notification to `user`.
pub fn event_notification_id(event_id: &str, user: Uuid) -> Uuid {
    derived_id(&["event", event_id, &user.to_string()])
}

fn unread(id: Uuid, title: &str, body: &str, created_at: String) -> Notification {
    Notification { id, title: title.to_owned(), body: body.to_owned(), created_at, is_read: false, read_at: None }
}

/// Creates the notifications `event` calls for (docs/account.md#notifications-from-events);
/// idempotent: a second call for the same event writes nothing new. Returns how many it wrote.
pub async fn from_event(store: &dyn Store, keys: WsKeys, event: &EventRecord) -> ApiResult<usize> {
    let Some(rule) = rule(event) else {
        if event.truncated && event.resource.kind == kind::EXPRESS_QUOTATION.name {
            tracing::warn!(event = %event.id, "a truncated quotation event that names no creator: nobody is notified");
        }
        return Ok(0);
    };
    let workspace = keys.workspace_id();
    // One user read for a single recipient; else the workspace's users (a few hundred at most:
    // one query of the users index).
    let users = async {
        match rule.recipients {
            Recipients::User(id) => Ok(identity::get_user(store, workspace, id).await?.into_iter().collect()),
            _ => identity::list_users(store, workspace).await,
        }
    };
    let project = async {
        match event.resource.project_id {
            Some(id) => project::get(store, keys, id).await,
            None => Ok(None),
        }
    };
    let task = async {
        match rule.subject.task_id() {
            Some(id) => task::get(store, keys, id).await,
            None => Ok(None),
        }
    };
    let (users, roles, project, task, actor) = tokio::join!(
        users,
        roles_cache::load(store, keys),
        project,
        task,
        identity::get_user_eventually(store, workspace, event.actor.user_id),
    );
    let (users, project): (Vec<User>, _) = (users?, project?);
    let roles = roles_cache::holding(store, keys, roles, users.iter().map(|u| u.role_id.as_str())).await?;
    let to = select(&rule.recipients, event, &users, &roles, project.as_ref());
    if to.is_empty() {
        return Ok(0);
    }
    let names =
        Names { actor: actor?.map(|a| a.name), project: project.map(|p| p.project.name), task: task?.map(|t| t.title) };
    let (title, body) = rule.subject.message(&names);
    let at = &event.payload.timestamp;
    let written = read_all(to, |user| {
        let notification = unread(event_notification_id(&event.id, user), &title, &body, at.clone());
        notifications::create(store, (keys, user), notification)
    })
    .await?;
    Ok(written.into_iter().filter(|wrote| *wrote).count())
}

/// One notification for one user, made by the service (e.g. the webhooks dispatcher telling an
/// endpoint's creator it was disabled). `source` makes the id deterministic (retries write it
/// once). A user who is gone or inactive gets nothing. Whether it wrote.
pub async fn to_user(
    store: &dyn Store,
    keys: WsKeys,
    user_id: Uuid,
    source: &str,
    title: &str,
    body: &str,
) -> ApiResult<bool> {
    let user = identity::get_user(store, keys.workspace_id(), user_id).await?;
    if !user.is_some_and(|u| u.is_active) {
        return Ok(false);
    }
    let id = derived_id(&["service", source, &user_id.to_string()]);
    notifications::create(store, (keys, user_id), unread(id, title, body, clock::now_rfc3339())).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use workapi_domain::event::{Actor, EventType, Payload, ResourceRef, new_id};
    use workapi_domain::identity::UserKind;
    use workapi_domain::permissions::roles::CustomRole;
    use workapi_domain::permissions::{CEO, GUEST, ROOT, RoleType, STAFF, TEAM_LEADER};
    use workapi_domain::project::Project;

    const AT: &str = "2026-11-27T10:15:00.123Z";

    fn event(event_type: EventType, actor: Uuid, project_id: Option<Uuid>, data: Value) -> EventRecord {
        let id = data.get("id").and_then(Value::as_str).unwrap_or("res").to_owned();
        EventRecord {
            id: new_id(1_764_238_500_123),
            actor: Actor { user_id: actor, impersonated_by: None },
            resource: ResourceRef { kind: event_type.resource.name.to_owned(), id, project_id },
            owner: None,
            payload: Payload { event_type: event_type.name.to_owned(), timestamp: AT.to_owned(), data },
            truncated: false,
            ttl: 0,
        }
    }

    #[test]
    fn the_rules_name_their_recipients_and_facts() {
        let (creator, task, actor) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        let quotation = json!({"id": Uuid::new_v4(), "taskId": task, "shortNumber": 3, "createdBy": creator,
                               "total": 1413.13, "currency": "EUR", "status": "Accepted"});
        let managers = Recipients::Holders(key::INVOICES_MANAGE);
        let decided = |accepted| Subject::QuotationDecided {
            accepted,
            number: Some(3),
            total: Some("1413.13 EUR".into()),
            task_id: Some(task),
        };
        let to = |recipients, subject| Some(Rule { recipients, subject });
        let cases: Vec<(EventType, Value, Option<Rule>)> = vec![
            (types::EXPRESS_QUOTATION_ACCEPTED, quotation.clone(), to(Recipients::User(creator), decided(true))),
            (types::EXPRESS_QUOTATION_REJECTED, quotation.clone(), to(Recipients::User(creator), decided(false))),
            // A truncated quotation keeps its creator (`workapi_kit::events`): told, without the facts.
            (
                types::EXPRESS_QUOTATION_ACCEPTED,
                json!({"id": "q", "createdBy": creator}),
                to(
                    Recipients::User(creator),
                    Subject::QuotationDecided { accepted: true, number: None, total: None, task_id: None },
                ),
            ),
            // One that names no creator (recorded before they were kept): nobody to tell.
            (types::EXPRESS_QUOTATION_ACCEPTED, json!({"id": "q"}), None),
            (types::EXPRESS_QUOTATION_CREATED, quotation, None),
            (
                types::SUBSCRIPTION_BILLING_CREATED,
                json!({"id": "b", "manualTitle": "Hosting", "price": 300}),
                to(managers.clone(), Subject::BillingCreated { title: Some("Hosting".into()) }),
            ),
            (
                types::INVOICE_ISSUED,
                json!({"id": "i", "number": "17", "total": 300, "currency": "JPY"}),
                to(
                    managers.clone(),
                    Subject::InvoiceIssued { number: Some("17".into()), total: Some("300 JPY".into()) },
                ),
            ),
            (
                types::INVOICE_ISSUED,
                json!({"id": "i", "number": "18", "total": 357, "currency": "EUR"}),
                to(
                    managers.clone(),
                    Subject::InvoiceIssued { number: Some("18".into()), total: Some("357.00 EUR".into()) },
                ),
            ),
            (
                types::INVOICE_CANCELLED,
                json!({"id": "c", "number": "19", "total": -357, "currency": "EUR"}),
                to(managers, Subject::InvoiceCancelled { credit_note: Some("19".into()) }),
            ),
            (
                types::HELPDESK_ACCOUNT_DISABLED,
                json!({"id": "m", "email": "support@x.example"}),
                to(
                    Recipients::Holders(key::WS_SETTINGS_MANAGE_SETTINGS),
                    Subject::HelpdeskDisabled { email: Some("support@x.example".into()) },
                ),
            ),
            (
                types::ROLE_PERMISSIONS_CHANGED,
                json!({"id": "ws_role", "name": "Accountant"}),
                to(
                    Recipients::RoleHolders("ws_role".into()),
                    Subject::RolePermissionsChanged { role: Some("Accountant".into()) },
                ),
            ),
            (types::HELPDESK_ACCOUNT_ENABLED, json!({"id": "m"}), None),
            (types::TAG_CREATED, json!({"id": "t"}), None),
            (types::ROLE_UPDATED, json!({"id": "ws_role"}), None),
            (types::NOTIFICATION_READ, json!({"id": "n"}), None),
        ];
        for (event_type, data, expected) in cases {
            let got = rule(&event(event_type, actor, None, data.clone()));
            assert_eq!(got, expected, "{} {data}", event_type.name);
        }
    }

    #[test]
    fn messages_use_the_names_found_and_stay_neutral_without_them() {
        let names = Names {
            actor: Some("Erika Mustermann".into()),
            project: Some("Acme web shop".into()),
            task: Some("Checkout redesign".into()),
        };
        let none = Names::default();
        let decided = Subject::QuotationDecided {
            accepted: true,
            number: Some(3),
            total: Some("1413.13 EUR".into()),
            task_id: None,
        };
        let bare_decision = Subject::QuotationDecided { accepted: false, number: None, total: None, task_id: None };
        let cases: Vec<(Subject, &Names, &str, &str)> = vec![
            (
                decided,
                &names,
                "Quotation accepted",
                "Erika Mustermann accepted express quotation #3 on “Checkout redesign” (1413.13 EUR).",
            ),
            (bare_decision, &none, "Quotation rejected", "Someone rejected an express quotation."),
            (
                Subject::BillingCreated { title: Some("Hosting".into()) },
                &names,
                "New subscription billing",
                "Erika Mustermann created the subscription billing “Hosting” in “Acme web shop”.",
            ),
            (
                Subject::BillingCreated { title: None },
                &none,
                "New subscription billing",
                "Someone created a subscription billing.",
            ),
            (
                Subject::InvoiceIssued { number: Some("17".into()), total: Some("357.00 EUR".into()) },
                &names,
                "Invoice issued",
                "Erika Mustermann issued invoice 17 in “Acme web shop” (357.00 EUR).",
            ),
            (
                Subject::InvoiceCancelled { credit_note: Some("18".into()) },
                &names,
                "Invoice cancelled",
                "Erika Mustermann cancelled an invoice in “Acme web shop” with credit note 18.",
            ),
            (
                Subject::HelpdeskDisabled { email: Some("support@x.example".into()) },
                &names,
                "Helpdesk disabled",
                "Erika Mustermann disabled the helpdesk of support@x.example: its mails no longer become tasks.",
            ),
            (
                Subject::RolePermissionsChanged { role: Some("Accountant".into()) },
                &names,
                "Your permissions changed",
                "Erika Mustermann changed the permissions of the role “Accountant”, your role or one it inherits from.",
            ),
        ];
        for (subject, names, title, body) in cases {
            assert_eq!(subject.message(names), (title.to_owned(), body.to_owned()), "{subject:?}");
        }
        // Long names are cut, control characters do not break the text.
        let long = Names { actor: Some(format!("{}\n", "x".repeat(80))), ..Names::default() };
        let (_, body) = Subject::BillingCreated { title: Some("Line\tbreak".into()) }.message(&long);
        assert_eq!(body, format!("{}… created the subscription billing “Line break”.", "x".repeat(MAX_NAME_CHARS)));
    }

    fn user(role: &str, kind: UserKind) -> User {
        User {
            id: Uuid::new_v4(),
            workspace_id: Uuid::nil(),
            email: String::new(),
            name: role.into(),
            role_id: role.into(),
            kind,
            language: "en".into(),
            is_active: true,
            created_at: AT.into(),
            organization_id: None,
        }
    }

    fn custom_role(id: &str, parent: &str, allowed: &[&str], role_type: RoleType) -> CustomRole {
        CustomRole {
            id: id.into(),
            name: id.into(),
            description: String::new(),
            icon: String::new(),
            role_type,
            parent_id: Some(parent.into()),
            raw_permissions: allowed.iter().map(|k| ((*k).to_owned(), true)).collect(),
            created_at: AT.into(),
            created_by: Uuid::nil(),
            edited_at: AT.into(),
            version: 1,
        }
    }

    fn project_with(members: Vec<Uuid>) -> ProjectRecord {
        ProjectRecord {
            project: Project {
                id: Uuid::new_v4(),
                name: "Shop".into(),
                customer_organization_id: None,
                express_quotations_enabled: true,
                hour_rate: Decimal::from(95),
                currency: "EUR".into(),
                tax_rate: Decimal::from(19),
            },
            member_ids: members,
        }
    }

    /// Who of a workspace's users gets an event's notification: the audience, minus the actor,
    /// the impersonating user, inactive users and whoever may not read the resource.
    #[test]
    fn recipients_are_the_audience_that_may_read_the_resource_never_the_actor() {
        let roles = Roles::new([
            custom_role("accountant", STAFF, &[key::INVOICES_MANAGE], RoleType::Normal),
            custom_role("junior_accountant", "accountant", &[], RoleType::Normal),
            custom_role("guest_plus", GUEST, &[], RoleType::Guest),
        ]);
        let root = user(ROOT, UserKind::Employee);
        let ceo = user(CEO, UserKind::Employee);
        let member_accountant = user("accountant", UserKind::Employee);
        let outside_accountant = user("accountant", UserKind::Employee);
        let junior = user("junior_accountant", UserKind::Employee);
        let leader = user(TEAM_LEADER, UserKind::Employee);
        let staff = user(STAFF, UserKind::Employee);
        let guest = user("guest_plus", UserKind::Employee);
        let mut gone = user(ROOT, UserKind::Employee);
        gone.is_active = false;
        let users = [&root, &ceo, &member_accountant, &outside_accountant, &junior, &leader, &staff, &guest, &gone]
            .map(Clone::clone);
        let project = project_with(vec![member_accountant.id, junior.id, leader.id, staff.id]);
        let ids = |list: &[&User]| list.iter().map(|u| u.id).collect::<Vec<_>>();

        // Invoice managers of the project, the actor (CEO) left out; an accountant outside the
        // project may not read it; nobody at all when the project is gone.
        let mut issued = event(types::INVOICE_ISSUED, ceo.id, Some(project.project.id), json!({"id": "i"}));
        let managers = Recipients::Holders(key::INVOICES_MANAGE);
        assert_eq!(
            select(&managers, &issued, &users, &roles, Some(&project)),
            ids(&[&root, &member_accountant, &junior])
        );
        assert!(select(&managers, &issued, &users, &roles, None).is_empty());
        // In imposter mode neither the user acted as nor the impersonating one.
        issued.actor = Actor { user_id: member_accountant.id, impersonated_by: Some(root.id) };
        assert_eq!(select(&managers, &issued, &users, &roles, Some(&project)), ids(&[&ceo, &junior]));

        // A quotation's creator, if they may still access its project.
        let decided = event(types::EXPRESS_QUOTATION_ACCEPTED, leader.id, Some(project.project.id), json!({}));
        assert_eq!(select(&Recipients::User(staff.id), &decided, &users, &roles, Some(&project)), ids(&[&staff]));
        let outsider = user(STAFF, UserKind::Employee);
        let with_outsider = [users.to_vec(), vec![outsider.clone()]].concat();
        assert!(select(&Recipients::User(outsider.id), &decided, &with_outsider, &roles, Some(&project)).is_empty());
        assert!(select(&Recipients::User(leader.id), &decided, &users, &roles, Some(&project)).is_empty(), "the actor");
        assert!(select(&Recipients::User(gone.id), &decided, &users, &roles, Some(&project)).is_empty(), "inactive");

        // A role's holders and the holders of roles inheriting from it; guests may not read roles.
        let changed = event(types::ROLE_PERMISSIONS_CHANGED, root.id, None, json!({"id": "accountant"}));
        let holders = Recipients::RoleHolders("accountant".into());
        assert_eq!(
            select(&holders, &changed, &users, &roles, None),
            ids(&[&member_accountant, &outside_accountant, &junior])
        );
        let guests = event(types::ROLE_PERMISSIONS_CHANGED, root.id, None, json!({"id": "guest_plus"}));
        assert!(select(&Recipients::RoleHolders("guest_plus".into()), &guests, &users, &roles, None).is_empty());

        // Workspace settings managers: Root and CEO, not the actor.
        let disabled = event(types::HELPDESK_ACCOUNT_DISABLED, root.id, None, json!({"id": "m"}));
        let settings = Recipients::Holders(key::WS_SETTINGS_MANAGE_SETTINGS);
        assert_eq!(select(&settings, &disabled, &users, &roles, None), ids(&[&ceo]));
    }

    /// On the embedded store: the creator gets one notification, written once however often
    /// the event is handled, at the event's time; the actor gets none; a service notification
    /// is written once per source and never to an inactive user.
    #[tokio::test]
    async fn an_event_handled_twice_notifies_once() {
        use workapi_store::sqlite::SqliteStore;
        let store = SqliteStore::in_memory().unwrap();
        let ws = identity::create_workspace(&store, "Notify", "en").await.unwrap();
        let keys = WsKeys::new(ws.id);
        let new_user = |name: &'static str, role: &'static str| {
            let email = format!("{}@notify.example", Uuid::new_v4().simple());
            let store = &store;
            async move {
                let new =
                    identity::NewUser { email: &email, name, role_id: role, kind: UserKind::Employee, language: "en" };
                identity::create_user(store, ws.id, new).await.unwrap()
            }
        };
        let creator = new_user("Anna Creator", STAFF).await;
        let decider = new_user("Erika Mustermann", TEAM_LEADER).await;
        let project = ProjectRecord { member_ids: vec![creator.id, decider.id], ..project_with(vec![]) };
        let item = workapi_store::entity::to_item(&project, keys).unwrap();
        store.put(item, workapi_store::Condition::NotExists).await.unwrap();

        let data = json!({"id": Uuid::new_v4(), "taskId": Uuid::new_v4(), "shortNumber": 2, "createdBy": creator.id,
                          "total": 95, "currency": "EUR"});
        let accepted = event(types::EXPRESS_QUOTATION_ACCEPTED, decider.id, Some(project.project.id), data);
        assert_eq!(from_event(&store, keys, &accepted).await.unwrap(), 1);
        assert_eq!(from_event(&store, keys, &accepted).await.unwrap(), 0, "the second handling writes nothing");
        let page = notifications::list(&store, (keys, creator.id), false, 10, None).await.unwrap();
        let expected = unread(
            event_notification_id(&accepted.id, creator.id),
            "Quotation accepted",
            "Erika Mustermann accepted express quotation #2 in “Shop” (95.00 EUR).",
            AT.to_owned(),
        );
        assert_eq!(page.items, vec![expected]);
        assert_eq!(notifications::unread_count(&store, (keys, creator.id)).await.unwrap(), 1);
        assert_eq!(notifications::unread_count(&store, (keys, decider.id)).await.unwrap(), 0, "never the actor");

        let (title, body) = ("Webhook endpoint disabled", "It failed for 5 days.");
        assert!(to_user(&store, keys, decider.id, "webhook:1", title, body).await.unwrap());
        assert!(!to_user(&store, keys, decider.id, "webhook:1", title, body).await.unwrap(), "once per source");
        assert!(to_user(&store, keys, decider.id, "webhook:2", title, body).await.unwrap());
        assert!(!to_user(&store, keys, Uuid::new_v4(), "webhook:1", title, body).await.unwrap(), "no such user");
        assert_eq!(notifications::unread_count(&store, (keys, decider.id)).await.unwrap(), 2);
    }

    #[test]
    fn ids_are_the_same_for_the_same_notification_only() {
        let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
        let id = event_notification_id("evt_1", a);
        assert_eq!(id, event_notification_id("evt_1", a));
        assert_eq!(id.get_version_num(), 8);
        assert_ne!(id, event_notification_id("evt_1", b));
        assert_ne!(id, event_notification_id("evt_2", a));
        // The parts are length-prefixed: no two splits of one text collide.
        assert_ne!(derived_id(&["ab", "c"]), derived_id(&["a", "bc"]));
        assert_ne!(derived_id(&["service", "evt_1", &a.to_string()]), derived_id(&["event", "evt_1", &a.to_string()]));
    }
}
