//! The demo workspace created on the first start of an empty local store.

use workapi_domain::identity::{self, NewToken, NewUser, SCOPE_READ, SCOPE_WRITE, UserKind};
use workapi_domain::token::TokenKey;
use workapi_store::Store;

pub const DEMO_EMAIL: &str = "admin@demo.example";
/// The demo admin's login password (`POST /api/auth/login`). A demo value, documented in the
/// README and docs/auth.md: set a real one with `workapi user set-password` for anything else.
pub const DEMO_PASSWORD: &str = "workapi-demo-password";

pub struct Demo {
    pub workspace_id: uuid::Uuid,
    pub user_id: uuid::Uuid,
    pub token: String,
}

/// Creates the demo workspace with a Root admin (login password [`DEMO_PASSWORD`]) and a
/// read-write token, unless any workspace exists already. Returns the new token (shown once).
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
            role_id: workapi_domain::permissions::ROOT,
            kind: UserKind::Employee,
            language: "en",
        },
    )
    .await?;
    oauth::password::set_password(store, ws.id, user.id, DEMO_PASSWORD).await?;
    seed_activities(store, ws.id).await?;
    let seed = crate::seed::parse(DEMO_SEED).map_err(|e| identity::IdentityError::Invalid(e.to_string()))?;
    crate::seed::load(store, ws.id, &seed).await.map_err(|e| identity::IdentityError::Invalid(e.to_string()))?;
    let admin = crate::seed::parse(DEMO_ADMIN_SEED).map_err(|e| identity::IdentityError::Invalid(e.to_string()))?;
    crate::seed::load(store, ws.id, &admin).await.map_err(|e| identity::IdentityError::Invalid(e.to_string()))?;
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

/// The demo seed file of the repository (`seed/demo.json`), compiled in so the binary needs no
/// checkout: two projects (express quotations on and off), a customer organization with an
/// active and an inactive contact, manual-position and catalog categories, two catalog products,
/// two manual positions and an imported product that November 2026's potential invoices bill.
pub const DEMO_SEED: &str = include_str!("../../../seed/demo.json");

/// The demo admin's own world (`seed/demo-admin.json`): its notifications, three unread and
/// one read. Apart from `DEMO_SEED` because it names the admin by e-mail, so `DEMO_SEED` still
/// loads into any workspace (`workapi seed load`, the benchmark).
pub const DEMO_ADMIN_SEED: &str = include_str!("../../../seed/demo-admin.json");
/// The demo's agents, saved provider key and skills (`seed/demo-agents.json`, compiled in),
/// loaded by the local server into the demo workspace it creates: the provider key's material
/// goes to the secret store.
pub const DEMO_AGENTS_SEED: &str = include_str!("../../../seed/demo-agents.json");

pub async fn seed_demo_agents(
    store: &dyn Store,
    secrets: &dyn workapi_kit::secrets::SecretStore,
    workspace_id: uuid::Uuid,
) -> crate::seed::SeedResult<crate::seed::Report> {
    let seed = crate::seed::parse(DEMO_AGENTS_SEED)?;
    crate::seed::load_with_secrets(store, secrets, workspace_id, &seed).await
}

/// A few work activities, so time booking has something to choose from.
async fn seed_activities(store: &dyn Store, workspace_id: uuid::Uuid) -> Result<(), identity::IdentityError> {
    use administration::activities::{rules, store as activities};
    let keys = workapi_store::keys::WsKeys::new(workspace_id);
    for (name, german) in [("Development", "Entwicklung"), ("Design", "Gestaltung"), ("Meeting", "Besprechung")] {
        let translations = vec![rules::Translation { language: "de".into(), name: german.into() }];
        let record = activities::prepare(store, keys, rules::Draft { name: name.into(), translations })
            .await
            .map_err(|e| identity::IdentityError::Invalid(e.message))?;
        activities::create(store, keys, &record, None)
            .await
            .map_err(|e| identity::IdentityError::Invalid(e.message))?;
    }
    Ok(())
}
