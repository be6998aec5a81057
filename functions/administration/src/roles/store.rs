//! Role persistence with optimistic concurrency. Every write reads the workspace's roles (one
//! query), applies its change to the role it found, and writes conditioned on that role's
//! `version`; a lost race re-reads and re-applies, so concurrent edits of one role all land.
//!
//! References bump versions: a write that names a parent bumps every custom role of the
//! parent's chain in the same transaction, so a concurrent delete of an ancestor (conditioned
//! on the version it saw with no children) fails, and two concurrent parent changes cannot
//! close a cycle between them.

use super::rules::{self, Draft, RoleView};
use uuid::Uuid;
use workapi_domain::identity;
use workapi_domain::permissions::roles::{CustomRole, new_custom_role_id};
use workapi_domain::permissions::{Roles, base_role};
use workapi_kit::conditional::IfMatch;
use workapi_kit::entity::{self, Attempt};
use workapi_kit::idempotency::Answer;
use workapi_kit::{ApiError, ApiResult};
use workapi_store::clock;
use workapi_store::keys::WsKeys;
use workapi_store::{Condition, Key, Store, TxOp, Update, VERSION};

/// The 409 of a write that keeps losing races.
const BUSY: &str = "The role is being changed concurrently; retry";

pub async fn load(store: &dyn Store, keys: WsKeys) -> ApiResult<Roles> {
    Ok(Roles::load(store, keys).await?)
}

/// The view of a role that exists; 404 otherwise (other workspaces' roles included).
pub fn view(roles: &Roles, id: &str, language: &str) -> ApiResult<RoleView> {
    if roles.get(id).is_none() {
        return Err(role_not_found());
    }
    rules::view(roles, id, language).map_err(|e| ApiError::internal(format!("role {id} does not resolve: {e}")))
}

fn role_not_found() -> ApiError {
    ApiError::not_found("Role not found")
}

/// The key of a custom role addressed by a path id: base roles are read-only (403), ids that
/// are not this workspace's custom-role ids are 404.
pub fn writable_key(keys: WsKeys, id: &str) -> ApiResult<Key> {
    if base_role(id).is_some() {
        return Err(ApiError::forbidden(format!("Base role {id} is read-only and cannot be modified or deleted")));
    }
    keys.custom_role(id).ok_or_else(role_not_found)
}

/// The version bumps that pin a parent chain for the length of one transaction.
fn pin_chain(keys: WsKeys, chain: &[&CustomRole]) -> Vec<TxOp> {
    chain
        .iter()
        .filter_map(|role| {
            Some(TxOp::Update {
                key: keys.custom_role(&role.id)?,
                update: Update::default().set(VERSION, role.version + 1),
                cond: Condition::VersionEquals(role.version),
            })
        })
        .collect()
}

/// The roles after a successful write, for the response.
fn with_role(roles: &Roles, role: CustomRole) -> Roles {
    let mut all: Vec<CustomRole> = roles.custom_roles().into_iter().filter(|r| r.id != role.id).cloned().collect();
    all.push(role);
    Roles::new(all)
}

/// Who writes: the user recorded as creator, and the role whose permissions authorize the
/// write (the no-escalation rule, `rules::check_escalation`).
#[derive(Clone, Copy)]
pub struct Editor<'a> {
    pub user: Uuid,
    pub role: &'a str,
}

/// Creates a custom role; `respond` turns the roles after the write and the new role's id into
/// the answer, which the role's transaction records (the idempotency completion, re-added on
/// every attempt).
pub async fn create(
    store: &dyn Store,
    keys: WsKeys,
    editor: Editor<'_>,
    draft: Draft,
    respond: impl Fn(&Roles, &str) -> ApiResult<Answer>,
) -> ApiResult<Answer> {
    let id = new_custom_role_id(keys.workspace_id());
    entity::retry_on_conflict(BUSY, |_| async {
        let roles = load(store, keys).await?;
        let checked = rules::check(&roles, None, &draft, "permissions")?;
        rules::check_escalation(&roles, editor.role, None, &draft, &checked.resolved)?;
        let now = clock::now_rfc3339();
        let role = record(id.clone(), &draft, now.clone(), editor.user, now, 1);
        let answer = respond(&with_role(&roles, role.clone()), &id)?;
        let mut ops = vec![TxOp::Put { item: entity::to_item(&role, keys)?, cond: Condition::NotExists }];
        ops.extend(pin_chain(keys, &checked.chain));
        written(keys, entity::transact(store, ops, answer.completion()).await, || answer)
    })
    .await
}

/// A transaction's outcome as an attempt: lost races are retried. A write that landed drops
/// this container's cached roles, so its next request authenticates with what it wrote.
fn written<T>(
    keys: WsKeys,
    result: Result<(), workapi_store::StoreError>,
    done: impl FnOnce() -> T,
) -> ApiResult<Attempt<T>> {
    match result {
        Ok(()) => {
            workapi_kit::auth::roles_cache::forget(keys.workspace_id());
            Ok(Attempt::Done(done()))
        }
        Err(e) if entity::is_conflict(&e) => Ok(Attempt::Conflict),
        Err(e) => Err(e.into()),
    }
}

fn record(
    id: String,
    draft: &Draft,
    created_at: String,
    created_by: Uuid,
    edited_at: String,
    version: i64,
) -> CustomRole {
    CustomRole {
        id,
        name: draft.name.clone(),
        description: draft.description.clone(),
        icon: draft.icon.clone(),
        role_type: draft.role_type,
        parent_id: draft.parent_id.clone(),
        raw_permissions: draft.raw.clone(),
        created_at,
        created_by,
        edited_at,
        version,
    }
}

/// What a change produces from the stored role: the new draft, and the request field blamed
/// when the draft holds permissions its type forbids.
pub type Change<'a> = dyn Fn(&CustomRole) -> ApiResult<(Draft, &'static str)> + Send + Sync + 'a;

/// The event of a change, from the roles as they are written (a deleted role: as they were).
pub type Event<'a> = dyn Fn(&Roles) -> ApiResult<TxOp> + Send + Sync + 'a;

/// Applies `change` to the stored role and writes it; `editedAt` and the version move on.
/// `if_match` is checked against the role as read in `language`, on the version written over.
pub async fn update(
    store: &dyn Store,
    keys: WsKeys,
    editor: Editor<'_>,
    id: &str,
    (if_match, language): (&IfMatch, &str),
    change: &Change<'_>,
    event: &Event<'_>,
) -> ApiResult<Roles> {
    writable_key(keys, id)?;
    entity::retry_on_conflict(BUSY, |_| async {
        let roles = load(store, keys).await?;
        let current = roles.custom(id).ok_or_else(role_not_found)?;
        if_match.check(&view(&roles, id, language)?)?;
        let (draft, blame) = change(current)?;
        let checked = rules::check(&roles, Some(id), &draft, blame)?;
        rules::check_escalation(&roles, editor.role, Some(current), &draft, &checked.resolved)?;
        // A change that changes nothing (a PUT sent again, as a client retries one whose answer
        // it lost) writes nothing and records no event.
        let unchanged = record(
            current.id.clone(),
            &draft,
            current.created_at.clone(),
            current.created_by,
            current.edited_at.clone(),
            current.version,
        );
        if &unchanged == current {
            return Ok(Attempt::Done(roles.clone()));
        }
        let role = CustomRole { edited_at: clock::now_rfc3339(), version: current.version + 1, ..unchanged };
        let mut ops =
            vec![TxOp::Put { item: entity::to_item(&role, keys)?, cond: Condition::VersionEquals(current.version) }];
        if draft.parent_id != current.parent_id {
            ops.extend(pin_chain(keys, &checked.chain));
        }
        let after = with_role(&roles, role);
        ops.push(event(&after)?);
        written(keys, store.transact(ops).await, || after)
    })
    .await
}

/// Deletes a custom role that no user holds and no role inherits from (409 otherwise: the
/// holders must be moved first, so nobody silently loses or gains permissions).
pub async fn delete(
    store: &dyn Store,
    keys: WsKeys,
    id: &str,
    (if_match, language): (&IfMatch, &str),
    event: &Event<'_>,
) -> ApiResult<()> {
    let key = writable_key(keys, id)?;
    entity::retry_on_conflict(BUSY, |_| async {
        let roles = load(store, keys).await?;
        let current = roles.custom(id).ok_or_else(role_not_found)?;
        if_match.check(&view(&roles, id, language)?)?;
        let children = roles.children_of(id).len();
        let holders =
            identity::list_users(store, keys.workspace_id()).await?.iter().filter(|u| u.role_id == id).count();
        if children > 0 || holders > 0 {
            return Err(ApiError::conflict(format!(
                "The role is still in use ({holders} user(s) hold it, {children} role(s) inherit from it); \
                 assign them another role first"
            )));
        }
        let delete = TxOp::Delete { key: key.clone(), cond: Condition::VersionEquals(current.version) };
        written(keys, store.transact(vec![delete, event(&roles)?]).await, || ())
    })
    .await
}
