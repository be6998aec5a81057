//! Events the service records (docs/events.md): the catalogue of event types (`<resource>.<verb>`)
//! with the kind of resource each names and who may read it, and the outbox item every change
//! writes in its own transaction (`workapi_kit::events` builds it from the caller and the
//! resource). The feed (`GET /events`), and later the webhook dispatcher, read these items.

use crate::permissions::{Requirement, key};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;
use workapi_store::entity::{Entity, IndexKey};
use workapi_store::keys::WsKeys;
use workapi_store::{Cursor, Key, Query, SortKey};

/// How long an event is kept (the item's `ttl`), and how far back the feed serves.
pub const RETENTION_SECS: i64 = 30 * 24 * 3600;
/// The largest `data` (JSON bytes) an event carries whole; a larger resource is recorded as its
/// id with `truncated: true` (docs/events.md), so an event item stays far below DynamoDB's
/// 400 KB and a change's transaction (the resource, its idempotency record, its event) below 4 MB.
pub const MAX_DATA_BYTES: usize = 64 * 1024;
/// The prefix of an event id.
pub const ID_PREFIX: &str = "evt_";

/// Who may see events about a kind of resource: whoever may read such a resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    /// Callers meeting the requirement; for a project-bound resource also only callers who
    /// may access the project.
    Readers(Requirement),
    /// Only the user the resource belongs to (a notification).
    Owner,
}

/// A kind of resource events name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResourceKind {
    pub name: &'static str,
    pub audience: Audience,
}

/// One event type of the catalogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventType {
    /// `<resource>.<verb>`.
    pub name: &'static str,
    pub resource: ResourceKind,
    /// The document's schema (a component name) of `data`: the resource as the API returns it.
    pub schema: &'static str,
    pub summary: &'static str,
}

const fn readers(name: &'static str, requirement: Requirement) -> ResourceKind {
    ResourceKind { name, audience: Audience::Readers(requirement) }
}

pub mod kind {
    use super::*;
    pub const TAG: ResourceKind = readers("tag", Requirement::Member);
    pub const ROLE: ResourceKind = readers("role", Requirement::Employee);
    pub const WORK_ACTIVITY: ResourceKind = readers("work_activity", Requirement::Member);
    pub const CATALOG_PRODUCT: ResourceKind = readers("catalog_product", Requirement::Member);
    pub const MANUAL_POSITION: ResourceKind = readers("manual_position", Requirement::Member);
    pub const PROJECT_PRODUCT: ResourceKind = readers("project_product", Requirement::Member);
    pub const EXPRESS_QUOTATION: ResourceKind = readers("express_quotation", Requirement::Member);
    pub const SUBSCRIPTION_BILLING: ResourceKind = readers("subscription_billing", Requirement::Member);
    pub const POTENTIAL_INVOICE: ResourceKind =
        readers("potential_invoice", Requirement::Permission(key::INVOICES_MANAGE));
    pub const INVOICE: ResourceKind = readers("invoice", Requirement::Permission(key::INVOICES_MANAGE));
    pub const FILE: ResourceKind = readers("file", Requirement::Member);
    pub const HELPDESK_ACCOUNT: ResourceKind =
        readers("helpdesk_account", Requirement::Permission(key::WS_SETTINGS_MANAGE_SETTINGS));
    pub const NOTIFICATION: ResourceKind = ResourceKind { name: "notification", audience: Audience::Owner };
    pub const AGENT_SKILL: ResourceKind = readers("agent_skill", Requirement::Employee);
    pub const AGENT_MANAGED_PROVIDER: ResourceKind =
        readers("agent_managed_provider", Requirement::Permission(key::WS_SETTINGS_MANAGE_SETTINGS));
    pub const PROJECT_AGENT_PROVIDER_SETTINGS: ResourceKind =
        readers("project_agent_provider_settings", Requirement::Member);
    pub const WEBHOOK_ENDPOINT: ResourceKind =
        readers("webhook_endpoint", Requirement::Permission(key::WS_SETTINGS_MANAGE_SETTINGS));
    /// A delivery of an event to an endpoint; its id is `<endpointId>:<eventId>`.
    pub const WEBHOOK_DELIVERY: ResourceKind =
        readers("webhook_delivery", Requirement::Permission(key::WS_SETTINGS_MANAGE_SETTINGS));
}

const fn event(name: &'static str, resource: ResourceKind, schema: &'static str, summary: &'static str) -> EventType {
    EventType { name, resource, schema, summary }
}

/// The catalogue: every event type the service records.
pub mod types {
    use super::*;
    pub const TAG_CREATED: EventType = event("tag.created", kind::TAG, "Tag", "A tag was created");
    pub const TAG_UPDATED: EventType = event("tag.updated", kind::TAG, "Tag", "A tag's colour changed");
    pub const TAG_DELETED: EventType = event("tag.deleted", kind::TAG, "Tag", "A tag was deleted (its last state)");
    pub const ROLE_CREATED: EventType = event("role.created", kind::ROLE, "RoleView", "A custom role was created");
    pub const ROLE_UPDATED: EventType =
        event("role.updated", kind::ROLE, "RoleView", "A role's name, icon, type or description changed");
    pub const ROLE_PERMISSIONS_CHANGED: EventType =
        event("role.permissions_changed", kind::ROLE, "RoleView", "A role's permissions changed");
    pub const ROLE_DELETED: EventType =
        event("role.deleted", kind::ROLE, "RoleView", "A custom role was deleted (its last state)");
    pub const WORK_ACTIVITY_CREATED: EventType =
        event("work_activity.created", kind::WORK_ACTIVITY, "Activity", "A work activity was created");
    pub const WORK_ACTIVITY_UPDATED: EventType =
        event("work_activity.updated", kind::WORK_ACTIVITY, "Activity", "A work activity was replaced");
    pub const CATALOG_PRODUCT_CREATED: EventType =
        event("catalog_product.created", kind::CATALOG_PRODUCT, "CatalogProduct", "A catalog product was created");
    pub const MANUAL_POSITION_CREATED: EventType =
        event("manual_position.created", kind::MANUAL_POSITION, "ManualPosition", "A manual position was created");
    pub const PROJECT_PRODUCT_IMPORTED: EventType = event(
        "project_product.imported",
        kind::PROJECT_PRODUCT,
        "ProjectProduct",
        "A catalog product was imported into a project",
    );
    pub const EXPRESS_QUOTATION_CREATED: EventType = event(
        "express_quotation.created",
        kind::EXPRESS_QUOTATION,
        "ExpressQuotation",
        "An express quotation was created",
    );
    pub const EXPRESS_QUOTATION_ACCEPTED: EventType = event(
        "express_quotation.accepted",
        kind::EXPRESS_QUOTATION,
        "ExpressQuotation",
        "An express quotation was accepted",
    );
    pub const EXPRESS_QUOTATION_REJECTED: EventType = event(
        "express_quotation.rejected",
        kind::EXPRESS_QUOTATION,
        "ExpressQuotation",
        "An express quotation was rejected",
    );
    pub const SUBSCRIPTION_BILLING_CREATED: EventType = event(
        "subscription_billing.created",
        kind::SUBSCRIPTION_BILLING,
        "SubscriptionBilling",
        "A subscription billing was created",
    );
    pub const POTENTIAL_INVOICE_UPDATED: EventType = event(
        "potential_invoice.updated",
        kind::POTENTIAL_INVOICE,
        "PotentialInvoiceSettings",
        "A potential invoice's billed range, recipient or a subscription row's quantity changed (data: its settings)",
    );
    pub const INVOICE_ISSUED: EventType =
        event("invoice.issued", kind::INVOICE, "Invoice", "A potential invoice was issued as an invoice");
    pub const INVOICE_CANCELLED: EventType =
        event("invoice.cancelled", kind::INVOICE, "Invoice", "An invoice was cancelled (data: the cancellation)");
    pub const FILE_UPLOADED: EventType = event("file.uploaded", kind::FILE, "UploadedFile", "A file was uploaded");
    pub const FILE_DELETED: EventType =
        event("file.deleted", kind::FILE, "UploadedFile", "An uploaded file was deleted");
    pub const HELPDESK_ACCOUNT_UPDATED: EventType = event(
        "helpdesk_account.updated",
        kind::HELPDESK_ACCOUNT,
        "EmailAccount",
        "A helpdesk mail account's settings changed",
    );
    pub const HELPDESK_ACCOUNT_DISABLED: EventType = event(
        "helpdesk_account.disabled",
        kind::HELPDESK_ACCOUNT,
        "EmailAccount",
        "A helpdesk mail account was disabled",
    );
    pub const HELPDESK_ACCOUNT_ENABLED: EventType = event(
        "helpdesk_account.enabled",
        kind::HELPDESK_ACCOUNT,
        "EmailAccount",
        "A helpdesk mail account was enabled",
    );
    pub const NOTIFICATION_READ: EventType =
        event("notification.read", kind::NOTIFICATION, "Notification", "A notification was marked read");
    pub const AGENT_SKILL_CREATED: EventType =
        event("agent_skill.created", kind::AGENT_SKILL, "Skill", "An agent skill was created");
    pub const AGENT_SKILL_UPDATED: EventType =
        event("agent_skill.updated", kind::AGENT_SKILL, "Skill", "An agent skill was changed");
    pub const AGENT_MANAGED_PROVIDER_SAVED: EventType = event(
        "agent_managed_provider.saved",
        kind::AGENT_MANAGED_PROVIDER,
        "ManagedProviderSettings",
        "An agent's managed-provider settings were saved (never the vendor key)",
    );
    pub const PROJECT_AGENT_PROVIDER_SETTINGS_SAVED: EventType = event(
        "project_agent_provider_settings.saved",
        kind::PROJECT_AGENT_PROVIDER_SETTINGS,
        "ProjectAgentProviderSettings",
        "A project's agent provider settings were saved",
    );
    pub const WEBHOOK_ENDPOINT_CREATED: EventType = event(
        "webhook_endpoint.created",
        kind::WEBHOOK_ENDPOINT,
        "WebhookEndpoint",
        "A webhook endpoint was created (never its secret)",
    );
    pub const WEBHOOK_ENDPOINT_UPDATED: EventType =
        event("webhook_endpoint.updated", kind::WEBHOOK_ENDPOINT, "WebhookEndpoint", "A webhook endpoint was changed");
    pub const WEBHOOK_ENDPOINT_DELETED: EventType =
        event("webhook_endpoint.deleted", kind::WEBHOOK_ENDPOINT, "WebhookEndpoint", "A webhook endpoint was deleted");
    pub const WEBHOOK_ENDPOINT_SECRET_ROTATED: EventType = event(
        "webhook_endpoint.secret_rotated",
        kind::WEBHOOK_ENDPOINT,
        "WebhookEndpoint",
        "A webhook endpoint's signing secret was rotated (never the secret)",
    );
    pub const WEBHOOK_DELIVERY_REDELIVERY_REQUESTED: EventType = event(
        "webhook_delivery.redelivery_requested",
        kind::WEBHOOK_DELIVERY,
        "Delivery",
        "A delivery was asked to be sent again",
    );

    /// Every type, in the order the document lists them.
    pub const ALL: &[EventType] = &[
        TAG_CREATED,
        TAG_UPDATED,
        TAG_DELETED,
        ROLE_CREATED,
        ROLE_UPDATED,
        ROLE_PERMISSIONS_CHANGED,
        ROLE_DELETED,
        WORK_ACTIVITY_CREATED,
        WORK_ACTIVITY_UPDATED,
        CATALOG_PRODUCT_CREATED,
        MANUAL_POSITION_CREATED,
        PROJECT_PRODUCT_IMPORTED,
        EXPRESS_QUOTATION_CREATED,
        EXPRESS_QUOTATION_ACCEPTED,
        EXPRESS_QUOTATION_REJECTED,
        SUBSCRIPTION_BILLING_CREATED,
        POTENTIAL_INVOICE_UPDATED,
        INVOICE_ISSUED,
        INVOICE_CANCELLED,
        FILE_UPLOADED,
        FILE_DELETED,
        HELPDESK_ACCOUNT_UPDATED,
        HELPDESK_ACCOUNT_DISABLED,
        HELPDESK_ACCOUNT_ENABLED,
        NOTIFICATION_READ,
        AGENT_SKILL_CREATED,
        AGENT_SKILL_UPDATED,
        AGENT_MANAGED_PROVIDER_SAVED,
        PROJECT_AGENT_PROVIDER_SETTINGS_SAVED,
        WEBHOOK_ENDPOINT_CREATED,
        WEBHOOK_ENDPOINT_UPDATED,
        WEBHOOK_ENDPOINT_DELETED,
        WEBHOOK_ENDPOINT_SECRET_ROTATED,
        WEBHOOK_DELIVERY_REDELIVERY_REQUESTED,
    ];

    pub fn named(name: &str) -> Option<&'static EventType> {
        ALL.iter().find(|t| t.name == name)
    }
}

/// The operations that change state and the event types each records: declared by the
/// function that serves them (`workapi_kit::function::Function::emits`).
#[derive(Debug, Clone, Copy)]
pub struct Emits {
    pub operation: &'static str,
    pub events: &'static [EventType],
}

/// Who made the change: the user the request acted as, and the token's owner in imposter mode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Actor {
    pub user_id: Uuid,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub impersonated_by: Option<Uuid>,
}

/// The resource an event names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRef {
    /// `tag`, `express_quotation`, `invoice`, … (the part of the type before the dot)
    pub kind: String,
    pub id: String,
    /// The project a project-bound resource belongs to: the event is seen only by callers who
    /// may access it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_id: Option<Uuid>,
}

/// The Standard Webhooks payload: what a webhook delivers and what the feed serves (with the
/// event's id, actor and resource beside it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Payload {
    #[serde(rename = "type")]
    pub event_type: String,
    pub timestamp: String,
    pub data: Value,
}

/// The outbox item of one event: `WS#<ws>#EVENTS` / `EVT#<id>`, time-ordered by its id, listed
/// by resource through GSI1 (`WS#<ws>#EVENTS#<kind>#<id>`), expiring after [`RETENTION_SECS`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventRecord {
    pub id: String,
    pub actor: Actor,
    pub resource: ResourceRef,
    /// For an [`Audience::Owner`] resource: the one user who sees the event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<Uuid>,
    pub payload: Payload,
    /// `data` is the resource's id only: the resource was larger than [`MAX_DATA_BYTES`].
    #[serde(default)]
    pub truncated: bool,
    pub ttl: i64,
}

impl EventRecord {
    /// Whether a user may see this event: the rule of the resource kind it names
    /// (docs/events.md, "Who sees which events"), the same requirement the resource's read has,
    /// and for a project-bound resource access to its project (`may_access_project`). The one
    /// rule of the feed (`GET /events`) and of who is notified (`account::notify`).
    pub fn visible_to(
        &self,
        user_id: Uuid,
        kind: crate::identity::UserKind,
        permissions: &crate::permissions::PermissionSet,
        may_access_project: impl FnOnce(Uuid) -> bool,
    ) -> bool {
        let Some(event_type) = types::named(&self.payload.event_type) else { return false };
        match event_type.resource.audience {
            Audience::Owner => self.owner == Some(user_id),
            Audience::Readers(requirement) => {
                requirement.met_by(kind, permissions) && self.resource.project_id.is_none_or(may_access_project)
            }
        }
    }
}

pub const PARTITION: &str = "EVENTS";

impl Entity for EventRecord {
    const TYPE: &'static str = "Event";
    const PREFIX: &'static str = "EVT#";
    type Scope = WsKeys;

    fn key(&self, keys: WsKeys) -> Key {
        key(keys, &self.id)
    }

    fn gsi1(&self, keys: WsKeys) -> Option<IndexKey> {
        Some(IndexKey {
            pk: resource_partition(keys, &self.resource.kind, &self.resource.id),
            sk: format!("{}{}", Self::PREFIX, self.id),
        })
    }
}

pub fn key(keys: WsKeys, id: &str) -> Key {
    Key::new(keys.partition(PARTITION), format!("{}{id}", EventRecord::PREFIX))
}

/// The GSI1 partition of one resource's events. Resource ids are UUIDs, numbers or closed
/// names, never free text with `#`.
pub fn resource_partition(keys: WsKeys, kind: &str, id: &str) -> String {
    keys.partition(&format!("{PARTITION}#{kind}#{id}"))
}

/// The workspace's events, oldest first.
pub fn feed_query(keys: WsKeys) -> Query {
    Query::table(keys.partition(PARTITION)).begins_with(EventRecord::PREFIX)
}

/// The feed's events up to the id `last` (inclusive), oldest first.
pub fn feed_query_until(keys: WsKeys, last: &str) -> Query {
    feed_query(keys).sk(until(last))
}

/// One resource's events up to the id `last` (inclusive), oldest first.
pub fn resource_query_until(keys: WsKeys, kind: &str, id: &str, last: &str) -> Query {
    Query::gsi1(resource_partition(keys, kind, id)).sk(until(last))
}

fn until(last: &str) -> SortKey {
    SortKey::Between(EventRecord::PREFIX.to_owned(), format!("{}{last}", EventRecord::PREFIX))
}

/// Where the feed continues after the event `id` (in the table, or in one resource's index).
pub fn start_after(keys: WsKeys, id: &str, resource: Option<(&str, &str)>) -> Cursor {
    let table = key(keys, id);
    match resource {
        None => workapi_store::entity::table_start(&table),
        Some((kind, resource_id)) => workapi_store::entity::index_start(
            workapi_store::Index::Gsi1,
            &table,
            IndexKey { pk: resource_partition(keys, kind, resource_id), sk: format!("{}{id}", EventRecord::PREFIX) },
        ),
    }
}

const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// A new event id: `evt_` and a ULID (48 bits of milliseconds since the epoch, 80 random bits,
/// Crockford base32), so ids sort by the time they were made and never repeat.
pub fn new_id(epoch_ms: i64) -> String {
    id_of(epoch_ms, rand::random::<u128>() >> 48)
}

/// The largest id an event made at or before `epoch_ms` can have (all 80 random bits set).
pub fn last_id_at(epoch_ms: i64) -> String {
    id_of(epoch_ms, (1 << 80) - 1)
}

/// How long the feed waits before it lists an event: longer than a change can take to commit
/// after its event's id was made (the API's 8 s request deadline) plus a margin for the clocks
/// of the instances that make ids. An id is made before its transaction commits, so without
/// the wait an event could appear behind a cursor a poller already passed (docs/events.md,
/// "A gapless feed").
pub const SETTLE_MS: i64 = 15_000;

/// The last id the feed lists at `now_ms` when events settle for `settle_ms`.
pub fn settled_until(now_ms: i64, settle_ms: i64) -> String {
    last_id_at(now_ms - settle_ms)
}

fn id_of(epoch_ms: i64, random: u128) -> String {
    let value: u128 = ((epoch_ms.max(0) as u128 & ((1 << 48) - 1)) << 80) | (random & ((1 << 80) - 1));
    let mut out = [0u8; 26];
    for (i, slot) in out.iter_mut().enumerate() {
        let shift = 125 - 5 * i as u32;
        *slot = CROCKFORD[((value >> shift) & 31) as usize];
    }
    format!("{ID_PREFIX}{}", String::from_utf8_lossy(&out))
}

/// The millisecond an id was made at; `None` for what is not an event id.
pub fn id_epoch_ms(id: &str) -> Option<i64> {
    let ulid = id.strip_prefix(ID_PREFIX)?;
    if ulid.len() != 26 {
        return None;
    }
    let mut value: u128 = 0;
    for c in ulid.bytes() {
        let digit = CROCKFORD.iter().position(|&d| d == c.to_ascii_uppercase())?;
        value = (value << 5) | digit as u128;
    }
    Some((value >> 80) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The feed's bound at a millisecond holds every id made then and none made later, and
    /// reads back as that millisecond.
    #[test]
    fn the_last_id_of_a_millisecond_bounds_its_ids() {
        for at in [0, 1, 1_795_807_318_576, (1 << 48) - 2] {
            let last = last_id_at(at);
            assert_eq!(id_epoch_ms(&last), Some(at));
            assert!(last.ends_with(&"Z".repeat(16)), "{last}");
            for _ in 0..200 {
                assert!(new_id(at) <= last, "an id of {at} is within its bound");
                assert!(new_id(at + 1) > last, "an id of {} is beyond the bound of {at}", at + 1);
                assert!(new_id(at - 1) < last);
            }
        }
        assert_eq!(settled_until(100_000, SETTLE_MS), last_id_at(85_000));
    }

    /// Who sees an event: the kind's requirement, the project for a project-bound resource, the
    /// recipient alone for a notification's.
    #[test]
    fn an_event_is_visible_as_its_resource_is_readable() {
        use crate::identity::UserKind::Employee;
        use crate::permissions::{PermissionSet, ROOT, Roles, STAFF};
        let event = |event_type: EventType, project_id: Option<Uuid>, owner: Option<Uuid>| EventRecord {
            id: new_id(1),
            actor: Actor { user_id: Uuid::nil(), impersonated_by: None },
            resource: ResourceRef { kind: event_type.resource.name.into(), id: "r".into(), project_id },
            owner,
            payload: Payload { event_type: event_type.name.into(), timestamp: String::new(), data: Value::Null },
            truncated: false,
            ttl: 0,
        };
        let (root, staff) =
            (PermissionSet::from_roles(&Roles::default(), ROOT), PermissionSet::from_roles(&Roles::default(), STAFF));
        let (me, project) = (Uuid::new_v4(), Uuid::new_v4());
        let tag = event(types::TAG_CREATED, None, None);
        assert!(tag.visible_to(me, Employee, &staff, |_| false), "every member reads tags");
        let invoice = event(types::INVOICE_ISSUED, Some(project), None);
        assert!(!invoice.visible_to(me, Employee, &staff, |_| true), "Invoices.manage needed");
        assert!(invoice.visible_to(me, Employee, &root, |p| p == project));
        assert!(!invoice.visible_to(me, Employee, &root, |_| false), "and the project");
        let read = event(types::NOTIFICATION_READ, None, Some(me));
        assert!(read.visible_to(me, Employee, &staff, |_| false));
        assert!(!read.visible_to(Uuid::new_v4(), Employee, &root, |_| true), "the recipient alone");
    }

    #[test]
    fn ids_sort_by_time_and_carry_it() {
        let a = new_id(1_764_000_000_000);
        let b = new_id(1_764_000_000_001);
        assert!(a.starts_with("evt_") && a.len() == 30, "{a}");
        assert!(a < b);
        assert_ne!(new_id(5), new_id(5));
        assert_eq!(id_epoch_ms(&a), Some(1_764_000_000_000));
        assert_eq!(id_epoch_ms("evt_short"), None);
        assert_eq!(id_epoch_ms("tag_01ARZ3NDEKTSV4RRFFQ69G5FAV"), None);
    }

    #[test]
    fn type_names_are_unique_and_name_their_resource() {
        let mut names: Vec<&str> = types::ALL.iter().map(|t| t.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), types::ALL.len());
        for t in types::ALL {
            assert_eq!(t.name.split_once('.').map(|(kind, _)| kind), Some(t.resource.name), "{}", t.name);
        }
    }
}
