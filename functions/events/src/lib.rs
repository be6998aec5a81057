//! The `events` function: `GET /events`, the feed of the workspace's events, and the webhook
//! endpoints they are delivered to (`/webhooks`; docs/events.md).
//! Every change writes its event in its own transaction (`workapi_kit::events`); this function
//! reads them back, oldest first, 30 days long, each only to callers who may read the resource
//! it names. Its own function because `/events` is its own path prefix; `/webhooks` is served
//! here too, beside the events it subscribes to, because the delivery of the events to those
//! endpoints (and their secrets) will run here (issue 35, item 4).

pub mod deliveries;
pub mod jobs;
pub mod webhooks;

use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::HashSet;
use utoipa::openapi::path::{Parameter, ParameterBuilder, ParameterIn, ParameterStyle};
use utoipa::openapi::{Ref, RefOr, Required};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;
use workapi_domain::event::{self, Actor, EventRecord, EventType, RETENTION_SECS, ResourceRef, id_epoch_ms, types};
use workapi_domain::permissions::Requirement;
use workapi_domain::project;
use workapi_kit::entity::{self, Entity};
use workapi_kit::events::Emits;
use workapi_kit::function::{Function, Grant, Needs, Resource, Route};
use workapi_kit::openapi::ApiTag;
use workapi_kit::paging::{OrderKey, PageParams, Paged, Paging, StoreList};
use workapi_kit::request::Query;
use workapi_kit::{ApiError, ApiResult, AppState, Caller};
use workapi_store::{Cursor, clock};

pub const FUNCTION: Function = Function {
    name: "events",
    prefixes: &["/events", "/webhooks"],
    tags: &[
        ApiTag {
            name: "events",
            description: "The workspace's events (what changed, who changed it, the resource as it became): a feed \
                          kept 30 days; the same events are the webhooks this document lists",
        },
        ApiTag {
            name: "webhooks",
            description: "Webhook endpoints: where the workspace's events are delivered, signed (Standard \
                          Webhooks), with secrets shown once and rotated with a 24-hour overlap",
        },
    ],
    api,
    entities: &[
        EventRecord::KIND,
        webhooks::EndpointRecord::KIND,
        webhooks::EndpointCount::KIND,
        deliveries::DeliveryRecord::KIND,
    ],
    emits: &[
        Emits { operation: "createWebhookEndpoint", events: &[types::WEBHOOK_ENDPOINT_CREATED] },
        Emits { operation: "updateWebhookEndpoint", events: &[types::WEBHOOK_ENDPOINT_UPDATED] },
        Emits { operation: "deleteWebhookEndpoint", events: &[types::WEBHOOK_ENDPOINT_DELETED] },
        Emits { operation: "rotateWebhookSecret", events: &[types::WEBHOOK_ENDPOINT_SECRET_ROTATED] },
        Emits { operation: "redeliverWebhookDelivery", events: &[types::WEBHOOK_DELIVERY_REDELIVERY_REQUESTED] },
    ],
    needs: Needs {
        summary: "the event feed, webhook endpoints with secrets in Secrets Manager",
        note: "Webhook endpoints' signing secrets live in Secrets Manager, one secret per value, named\n\
               workapi/<stack>/agents/<workspace>/webhooks/<endpoint>/... (the workspaces' secret prefix); the table\n\
               keeps only the names. This function may create and delete those names only.",
        routes: &[
            Route::new("Events", "/events"),
            Route::new("EventsProxy", "/events/{proxy+}"),
            Route::new("Webhooks", "/webhooks"),
            Route::new("WebhooksProxy", "/webhooks/{proxy+}"),
        ],
        grants: &[
            Grant {
                sid: "WebhookSigningSecrets",
                actions: &["secretsmanager:CreateSecret", "secretsmanager:DeleteSecret"],
                on: Resource::WebhookSecrets,
                note: "",
            },
            Grant {
                sid: "Redeliveries",
                actions: &["sqs:SendMessage"],
                on: Resource::DeliveryQueue,
                note: "A redelivery queues its attempt for the dispatcher (DispatchFunction).",
            },
        ],
        ..Needs::DATA
    },
};

/// The `data` of an event whose resource was too large to copy into it (over 64 KiB): the
/// resource's id, and its creator where the resource records one; read the resource for the rest.
#[derive(ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)] // documents the webhooks' data
struct TruncatedData {
    /// The resource's id
    id: String,
    /// Who created the resource, when the resource records it (an express quotation): whom a
    /// decision about it concerns, without a read
    #[schema(format = Uuid)]
    created_by: Option<String>,
}

#[derive(utoipa::OpenApi)]
#[openapi(components(schemas(TruncatedData)))]
struct EventSchemas;

fn api() -> OpenApiRouter<AppState> {
    let routes = OpenApiRouter::with_openapi(<EventSchemas as utoipa::OpenApi>::openapi());
    let mut router = routes
        .routes(routes!(list_events))
        .routes(routes!(webhooks::list_endpoints, webhooks::create_endpoint))
        .routes(routes!(webhooks::get_endpoint, webhooks::update_endpoint, webhooks::delete_endpoint))
        .routes(routes!(webhooks::rotate_secret))
        .routes(routes!(deliveries::list_deliveries))
        .routes(routes!(deliveries::redeliver));
    // The expired cursor's 410, with the error body every error has.
    if let Some(list) = router.get_openapi_mut().paths.paths.get_mut("/events").and_then(|item| item.get.as_mut()) {
        list.responses.responses.insert("410".into(), RefOr::Ref(Ref::from_response_name("Error")));
    }
    router
}

/// One event of the feed: the Standard Webhooks payload (`type`, `timestamp`, `data`) with the
/// event's id, who made the change and what it changed.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(examples(json!({"id": "evt_01KB0M7Q4ZJ3W1X9Y2C5V8N6RT", "type": "tag.created",
    "timestamp": "2026-11-27T10:15:00.123Z", "actor": {"userId": "0b7e4c1a-2d3f-4a5b-8c6d-7e8f9a0b1c2d"},
    "resource": {"kind": "tag", "id": "3f0c6a5e-8f1e-4c55-9d3a-0b1d2c3e4f50"},
    "data": {"id": "3f0c6a5e-8f1e-4c55-9d3a-0b1d2c3e4f50", "name": "Urgent", "color": null, "isDeleted": false},
    "truncated": false})))]
pub struct FeedEvent {
    /// The event's stable id (`evt_` and a ULID: ids sort by time); a webhook's `webhook-id`
    pub id: String,
    /// `<resource>.<verb>`: one of the document's webhooks
    #[serde(rename = "type")]
    pub event_type: String,
    /// When the change was made
    #[schema(format = DateTime)]
    pub timestamp: String,
    pub actor: Actor,
    pub resource: ResourceRef,
    /// The resource as the API returned it after the change (its schema: the webhook of the
    /// type); only `{"id"}` when `truncated`
    #[schema(value_type = Object)]
    pub data: Value,
    /// The resource was too large to copy into the event (over 64 KiB): read it instead
    pub truncated: bool,
}

impl From<EventRecord> for FeedEvent {
    fn from(record: EventRecord) -> Self {
        FeedEvent {
            id: record.id,
            event_type: record.payload.event_type,
            timestamp: record.payload.timestamp,
            actor: record.actor,
            resource: record.resource,
            data: record.payload.data,
            truncated: record.truncated,
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct EventFilter {
    #[serde(rename = "type")]
    event_type: Option<String>,
    resource_kind: Option<String>,
    resource_id: Option<String>,
}

/// Written out rather than derived: utoipa's derive drops a parameter's description, style and
/// example once its schema is given (`schema_with`), and `type` and `resourceKind` take the
/// catalogue's names, so that what the document admits is what the filter takes.
impl IntoParams for EventFilter {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Type};
        let mut kinds: Vec<&str> = types::ALL.iter().map(|t| t.resource.name).collect();
        kinds.sort_unstable();
        kinds.dedup();
        let names = ObjectBuilder::new().schema_type(Type::String).enum_values(Some(types::ALL.iter().map(|t| t.name)));
        let param = |name: &str, description: &str| {
            ParameterBuilder::new()
                .name(name)
                .parameter_in(ParameterIn::Query)
                .required(Required::False)
                .description(Some(description))
        };
        vec![
            param("type", "Only events of these types, comma-separated (e.g. `tag.created,tag.deleted`)")
                .schema(Some(ArrayBuilder::new().items(names).min_items(Some(1))))
                .style(Some(ParameterStyle::Form))
                .explode(Some(false))
                .example(Some(json!(["express_quotation.accepted", "express_quotation.rejected"])))
                .build(),
            param("resourceKind", "Only events naming resources of this kind (the part of a type before the dot)")
                .schema(Some(ObjectBuilder::new().schema_type(Type::String).enum_values(Some(kinds))))
                .example(Some(json!("express_quotation")))
                .build(),
            param("resourceId", "Only events naming this resource (with `resourceKind`)")
                .schema(Some(ObjectBuilder::new().schema_type(Type::String)))
                .example(Some(json!("9d2f7c1e-5b3a-4e8d-a6f0-1c2b3d4e5f60")))
                .build(),
        ]
    }
}

/// What a request's filter keeps.
#[derive(Debug)]
struct Filter {
    types: Option<HashSet<&'static str>>,
    kind: Option<&'static str>,
    resource_id: Option<String>,
}

impl Filter {
    fn parse(filter: EventFilter) -> ApiResult<Filter> {
        let mut errors = std::collections::BTreeMap::<String, Vec<String>>::new();
        let mut fail = |field: &str, message: String| errors.entry(field.to_owned()).or_default().push(message);
        let types = filter.event_type.map(|list| {
            let mut named = HashSet::new();
            for name in list.split(',').map(str::trim) {
                match types::named(name) {
                    Some(t) => {
                        named.insert(t.name);
                    }
                    None => fail("type", format!("type: {name:?} is not an event type of this API")),
                }
            }
            named
        });
        let kind = filter.resource_kind.as_deref().and_then(|kind| {
            let known = types::ALL.iter().map(|t: &EventType| t.resource.name).find(|k| *k == kind);
            if known.is_none() {
                fail("resourceKind", format!("resourceKind: {kind:?} is not a kind of resource events name"));
            }
            known
        });
        if filter.resource_id.is_some() && filter.resource_kind.is_none() {
            fail("resourceId", "resourceId needs resourceKind".to_owned());
        }
        if !errors.is_empty() {
            return Err(ApiError::validation(errors));
        }
        Ok(Filter { types, kind, resource_id: filter.resource_id })
    }

    fn keeps(&self, record: &EventRecord) -> bool {
        self.types.as_ref().is_none_or(|types| types.contains(record.payload.event_type.as_str()))
            && self.kind.is_none_or(|kind| record.resource.kind == kind)
    }
}

/// Who may see which events: the rule of the resource kind each names (docs/events.md).
struct Audiences<'a> {
    caller: &'a Caller,
    /// The projects the caller may access; `None`: all (`Projects.viewAll`).
    projects: Option<HashSet<Uuid>>,
}

impl Audiences<'_> {
    fn sees(&self, record: &EventRecord) -> bool {
        let caller = self.caller;
        record.visible_to(caller.user.id, caller.user.kind, &caller.permissions, |project| {
            self.projects.as_ref().is_none_or(|accessible| accessible.contains(&project))
        })
    }
}

/// List events
///
/// The workspace's events of the last 30 days, oldest first (newest last): each change the API
/// made, with who made it and the resource as it became. Only events about resources the caller
/// may read are listed (a project-bound resource: also only in projects the caller may access).
/// Page on with the `Link` header's URL; a cursor older than the 30 days kept is 410 (start
/// again without one). Filter by `type` (comma-separated) and by resource. An event is listed
/// once it has settled, 15 s after its change, so that none can appear behind a cursor already
/// handed out; every page that holds events links to what follows, the last one too, so a
/// poller keeps the last link and comes back to it (webhooks deliver without the wait).
#[utoipa::path(get, path = "/events", operation_id = "listEvents", tag = "events", params(EventFilter, PageParams),
    responses((status = 200, description = "The events, oldest first", body = [FeedEvent])))]
async fn list_events(
    State(state): State<AppState>,
    caller: Caller,
    Query(filter): Query<EventFilter>,
    paging: Paging,
) -> ApiResult<Paged<FeedEvent>> {
    caller.authorize(Requirement::Member)?;
    let filter = Filter::parse(filter)?;
    let now = clock::now();
    let now_ms = (now.unix_timestamp_nanos() / 1_000_000) as i64;
    // Only events that have settled: none can appear later behind them (event::SETTLE_MS).
    let last = event::settled_until(now_ms, state.events_settle_ms());
    if let Some(place) = paging.place()? {
        let after = place.last_text().ok_or_else(not_a_cursor)?;
        if expired(id_epoch_ms(after).ok_or_else(not_a_cursor)?, now_ms) {
            return Err(ApiError::new(
                StatusCode::GONE,
                "The cursor points before the 30 days of events kept; start again without a cursor",
            ));
        }
        // A cursor at an event not settled yet (one a webhook named): nothing after it yet.
        if after >= last.as_str() {
            return paging.window(Vec::<FeedEvent>::new(), |e| OrderKey::new().text(e.id.clone()))?.answer();
        }
    }
    let store = state.store();
    let keys = caller.keys();
    let viewer = caller.viewer();
    let projects = project::accessible_ids(store, viewer).await?;
    let audiences = Audiences { caller: &caller, projects };
    let resource = match (&filter.kind, &filter.resource_id) {
        (Some(kind), Some(id)) => Some((*kind, id.as_str())),
        _ => None,
    };
    let query = match resource {
        Some((kind, id)) => event::resource_query_until(keys, kind, id, &last),
        None => event::feed_query_until(keys, &last),
    };
    let list = StoreList {
        query,
        start_after: |after: &OrderKey| -> Option<Cursor> {
            let id = after.last_text()?;
            id_epoch_ms(id)?;
            Some(event::start_after(keys, id, resource))
        },
        key: |e: &FeedEvent| OrderKey::new().text(e.id.clone()),
        largest_item: 8 * 1024,
    };
    let now_secs = now.unix_timestamp();
    let decode = |item| {
        let record: EventRecord = entity::from_item(item)?;
        // Past its ttl: DynamoDB deletes expired items within days, not at once.
        let kept = record.ttl > now_secs && filter.keeps(&record) && audiences.sees(&record);
        Ok(kept.then(|| FeedEvent::from(record)))
    };
    paging.window_from_store(store, list, decode).await?.resumable().answer()
}

/// Whether an event made at `at_ms` is beyond the feed's 30 days at `now_ms`.
fn expired(at_ms: i64, now_ms: i64) -> bool {
    at_ms < now_ms - RETENTION_SECS * 1000
}

fn not_a_cursor() -> ApiError {
    ApiError::field("cursor", "cursor is not a cursor of this list: start again without one")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_name_known_types_and_kinds() {
        let parse = |t: Option<&str>, k: Option<&str>, id: Option<&str>| {
            Filter::parse(EventFilter {
                event_type: t.map(str::to_owned),
                resource_kind: k.map(str::to_owned),
                resource_id: id.map(str::to_owned),
            })
        };
        let both = parse(Some("tag.created, tag.deleted"), None, None).unwrap();
        assert_eq!(both.types.unwrap().len(), 2);
        let wrong = parse(Some("tag.created,tag.exploded"), Some("spaceship"), Some("x")).unwrap_err();
        let fields: Vec<_> = wrong.errors.unwrap().into_keys().collect();
        assert_eq!(fields, ["resourceKind", "type"]);
        let alone = parse(None, None, Some("x")).unwrap_err();
        assert_eq!(alone.errors.unwrap().into_keys().collect::<Vec<_>>(), ["resourceId"]);
        assert_eq!(parse(None, Some("invoice"), Some("x")).unwrap().kind, Some("invoice"));
    }

    #[test]
    fn a_cursor_expires_with_the_events_kept() {
        let now = 1_800_000_000_000;
        assert!(!expired(now - RETENTION_SECS * 1000 + 1, now));
        assert!(expired(now - RETENTION_SECS * 1000 - 1, now));
    }
}
