//! The workspace's custom roles as authentication reads them: kept by each container for at
//! most [`FRESH_FOR`], so that the workspace partition, which holds them, is not read on every
//! request (docs/performance.md, "Scale"; docs/auth.md, "How fresh the caller is").
//!
//! A role's change reaches this container's requests at once (its own role writes call
//! [`forget`]) and other containers' within [`FRESH_FOR`] plus DynamoDB's eventual read, the
//! bound the eventually consistent read already documented. A role the cached set does not hold
//! is read again consistently before a request is refused (the caller's miss path), so a role
//! created a moment ago in another container is never refused.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};
use uuid::Uuid;
use workapi_domain::permissions::{Roles, base_role};
use workapi_store::keys::WsKeys;
use workapi_store::{Store, StoreResult};

/// How long a container uses the custom roles it read.
pub const FRESH_FOR: Duration = Duration::from_secs(1);
/// Workspaces kept at most; a container serving more starts over (a cache, not a store).
const MAX_WORKSPACES: usize = 1024;

type Entries = HashMap<Uuid, (Instant, Roles)>;

static CACHE: LazyLock<Mutex<Entries>> = LazyLock::new(Default::default);

fn entries() -> std::sync::MutexGuard<'static, Entries> {
    // A panic while the lock was held cannot leave an entry half-written: keep using it.
    CACHE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The custom roles of `keys`' workspace: this container's copy when it is younger than
/// [`FRESH_FOR`], else an eventually consistent read, kept.
pub async fn load(store: &dyn Store, keys: WsKeys) -> StoreResult<Roles> {
    load_at(store, keys, Instant::now()).await
}

async fn load_at(store: &dyn Store, keys: WsKeys, now: Instant) -> StoreResult<Roles> {
    let workspace = keys.workspace_id();
    if let Some((read_at, roles)) = entries().get(&workspace)
        && now.saturating_duration_since(*read_at) < FRESH_FOR
    {
        return Ok(roles.clone());
    }
    let roles = Roles::load_eventually(store, keys).await?;
    keep(workspace, now, roles.clone());
    Ok(roles)
}

/// The custom roles read consistently (a role the cached copy lacks), kept.
pub async fn reload(store: &dyn Store, keys: WsKeys) -> StoreResult<Roles> {
    let roles = Roles::load(store, keys).await?;
    keep(keys.workspace_id(), Instant::now(), roles.clone());
    Ok(roles)
}

/// `loaded` (what [`load`] returned), unless it lacks one of the custom roles `role_ids` (one
/// created in the last second, in another container): then the roles read again consistently.
/// A role nobody knows costs that one read and resolves to no permissions.
pub async fn holding<'a>(
    store: &dyn Store,
    keys: WsKeys,
    loaded: StoreResult<Roles>,
    role_ids: impl IntoIterator<Item = &'a str>,
) -> StoreResult<Roles> {
    match loaded {
        Ok(roles) if role_ids.into_iter().any(|id| base_role(id).is_none() && roles.custom(id).is_none()) => {
            reload(store, keys).await
        }
        other => other,
    }
}

fn keep(workspace: Uuid, read_at: Instant, roles: Roles) {
    let mut entries = entries();
    if entries.len() >= MAX_WORKSPACES && !entries.contains_key(&workspace) {
        entries.clear();
    }
    entries.insert(workspace, (read_at, roles));
}

/// Drops this container's copy of a workspace's roles: called after each role write, so the
/// container's next request reads what it wrote.
pub fn forget(workspace_id: Uuid) {
    entries().remove(&workspace_id);
}

#[cfg(test)]
mod tests {
    use super::*;
    use workapi_domain::identity;
    use workapi_domain::permissions::roles::CustomRole;
    use workapi_domain::permissions::{RoleType, STAFF};
    use workapi_store::sqlite::SqliteStore;
    use workapi_store::{Condition, entity};

    async fn add_role(store: &SqliteStore, keys: WsKeys, name: &str) -> String {
        let id = workapi_store::keys::new_custom_role_id(keys.workspace_id());
        let role = CustomRole {
            id: id.clone(),
            name: name.into(),
            description: String::new(),
            icon: String::new(),
            role_type: RoleType::Normal,
            parent_id: None,
            raw_permissions: Default::default(),
            created_at: "2026-11-27T00:00:00Z".into(),
            created_by: Uuid::nil(),
            edited_at: "2026-11-27T00:00:00Z".into(),
            version: 1,
        };
        store.put(entity::to_item(&role, keys).unwrap(), Condition::NotExists).await.unwrap();
        id
    }

    /// Within a second a container uses what it read; after it, or once the container's own
    /// write forgot it, it reads again.
    #[tokio::test]
    async fn a_container_keeps_roles_for_a_second_and_forgets_them_on_its_own_writes() {
        let store = SqliteStore::in_memory().unwrap();
        let ws = identity::create_workspace(&store, "Cache", "en").await.unwrap();
        let keys = WsKeys::new(ws.id);
        let start = Instant::now();
        let first = add_role(&store, keys, "First").await;
        assert!(load_at(&store, keys, start).await.unwrap().custom(&first).is_some());

        let second = add_role(&store, keys, "Second").await;
        let cached = load_at(&store, keys, start + Duration::from_millis(900)).await.unwrap();
        assert!(cached.custom(&second).is_none(), "younger than a second: not read again");
        let later = load_at(&store, keys, start + FRESH_FOR).await.unwrap();
        assert!(later.custom(&second).is_some(), "a second old: read again");

        let third = add_role(&store, keys, "Third").await;
        forget(ws.id);
        let now = start + FRESH_FOR + Duration::from_millis(1);
        assert!(load_at(&store, keys, now).await.unwrap().custom(&third).is_some(), "forgotten: read again");
        let fourth = add_role(&store, keys, "Fourth").await;
        assert!(reload(&store, keys).await.unwrap().custom(&fourth).is_some(), "a reload reads consistently");
        assert!(load_at(&store, keys, now).await.unwrap().custom(&fourth).is_some(), "and is kept");

        // A set lacking a role asked for is read again; one holding every role asked for is not.
        let fifth = add_role(&store, keys, "Fifth").await;
        let cached = || load_at(&store, keys, now);
        let holds = holding(&store, keys, cached().await, [STAFF, fourth.as_str()]).await.unwrap();
        assert!(holds.custom(&fifth).is_none(), "base roles and cached ones need no read");
        let holds = holding(&store, keys, cached().await, [STAFF, fifth.as_str()]).await.unwrap();
        assert!(holds.custom(&fifth).is_some(), "a missing one is read");
    }
}
