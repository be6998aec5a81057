//! The demo workspace created on the first start of an empty local store.

use shared::auth::pat::TokenKey;
use shared::identity::{self, NewToken, NewUser, SCOPE_READ, SCOPE_WRITE, UserKind};
use shared::store::Store;

pub const DEMO_EMAIL: &str = "admin@demo.example";

pub struct Demo {
    pub workspace_id: uuid::Uuid,
    pub user_id: uuid::Uuid,
    pub token: String,
}

/// Creates the demo workspace with a Root admin and a read-write token, unless any workspace
/// exists already. Returns the new token (shown once).
pub async fn ensure_demo(store: &dyn Store, key: &TokenKey) -> Result<Option<Demo>, identity::IdentityError> {
    if !identity::list_workspaces(store).await?.is_empty() {
        return Ok(None);
    }
    let ws = identity::create_workspace(store, "Demo workspace", "en").await?;
    let user = identity::create_user(
        store,
        ws.id,
        NewUser {
            email: DEMO_EMAIL,
            name: "Demo Admin",
            role_id: shared::permissions::ROOT,
            kind: UserKind::Employee,
            language: "en",
        },
    )
    .await?;
    let (token, _) = identity::create_token(
        store,
        key,
        ws.id,
        user.id,
        NewToken { name: "demo", scopes: vec![SCOPE_READ.into(), SCOPE_WRITE.into()], expires_at: None },
    )
    .await?;
    Ok(Some(Demo { workspace_id: ws.id, user_id: user.id, token }))
}
