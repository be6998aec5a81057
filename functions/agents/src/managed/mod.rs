//! Managed-provider settings (spec §4.11): saved whole, credentials in the secret store.
//!
//! A save reads the agent and the stored settings (and, when the body names them, the saved
//! provider key and the workspace's skills) concurrently, plans the new record
//! ([`plan::plan`]), creates each new secret under a fresh name, writes the record on the
//! version it read, and only then deletes the secrets the old record referred to and the new
//! one does not. A lost race deletes the secrets it created and runs again on the new version,
//! so concurrent saves never point at each other's secrets and no update is half applied.

pub mod input;
pub mod model;
pub mod plan;

use crate::records::{self, Agent};
use crate::skills::SkillRecord;
use input::SaveManagedProviderBody;
use model::{ManagedProviderRecord, SkillType, settings_key};
use std::collections::HashMap;
use uuid::Uuid;
use workapi_kit::entity::{self, Attempt};
use workapi_kit::idempotency::Answer;
use workapi_kit::input::Patch;
use workapi_kit::secrets::{SecretName, SecretStore, forget};
use workapi_kit::{ApiError, ApiResult};
use workapi_store::clock;
use workapi_store::keys::WsKeys;
use workapi_store::{Condition, Store, StoreError};

pub async fn agent_or_404(store: &dyn Store, keys: WsKeys, id: Uuid) -> ApiResult<Agent> {
    records::get_agent(store, keys, id).await?.ok_or_else(|| ApiError::not_found("Agent not found"))
}

/// The stored settings of an agent of the workspace: 404 for an unknown agent, and for an
/// agent without saved settings. Two concurrent reads.
pub async fn read(store: &dyn Store, keys: WsKeys, agent_id: Uuid) -> ApiResult<ManagedProviderRecord> {
    let key = settings_key(keys, agent_id);
    let (agent, settings) =
        tokio::join!(agent_or_404(store, keys, agent_id), entity::get::<ManagedProviderRecord>(store, &key));
    agent?;
    settings?.ok_or_else(|| ApiError::not_found("No managed-provider settings are saved for this agent"))
}

/// Saves the settings (see the module documentation). `respond` turns the record into the
/// answer, which the record's write records (the idempotency completion: the secrets are
/// stored first, the record and the completion last, in one transaction).
pub async fn save(
    store: &dyn Store,
    secrets: &dyn SecretStore,
    keys: WsKeys,
    agent_id: Uuid,
    body: &SaveManagedProviderBody,
    by: Uuid,
    respond: impl Fn(&ManagedProviderRecord) -> ApiResult<Answer>,
) -> ApiResult<Answer> {
    let provider_key_id = match body.provider_api_key_id {
        Patch::Value(id) => Some(id),
        _ => None,
    };
    let needs_skills = match &body.config.managed_agent {
        Patch::Value(m) => m.skills.iter().flat_map(|l| &l.0).any(|s| s.skill_type == SkillType::Custom),
        _ => false,
    };
    let key = settings_key(keys, agent_id);
    let (record, superseded, answer) =
        entity::retry_on_conflict("The settings are being changed concurrently; retry", |_| async {
            let (agent, existing, key_exists, skills) = tokio::join!(
                agent_or_404(store, keys, agent_id),
                entity::get::<ManagedProviderRecord>(store, &key),
                async {
                    match provider_key_id {
                        Some(id) => records::get_provider_key(store, keys, id).await.map(|k| k.is_some()),
                        None => Ok(false),
                    }
                },
                async { if needs_skills { records::list::<SkillRecord>(store, keys).await } else { Ok(Vec::new()) } },
            );
            agent?;
            let existing = existing?;
            let skills: HashMap<Uuid, i64> = skills?.into_iter().map(|s| (s.id, s.version)).collect();
            let ctx = plan::Context {
                keys,
                agent_id,
                by,
                now: clock::now_rfc3339(),
                provider_key_exists: key_exists?,
                skills: &skills,
            };
            let plan = plan::plan(existing.as_ref(), body, &ctx)?;
            let mut created: Vec<SecretName> = Vec::new();
            for (name, value) in &plan.create {
                if let Err(e) = secrets.create(name, value).await {
                    forget(secrets, &created).await;
                    return Err(e.into());
                }
                created.push(name.clone());
            }
            let cond = existing.as_ref().map_or(Condition::NotExists, |e| Condition::VersionEquals(e.version));
            let item = entity::to_item(&plan.record, keys)?;
            let answer = match respond(&plan.record) {
                Ok(answer) => answer,
                Err(e) => {
                    forget(secrets, &created).await;
                    return Err(e);
                }
            };
            match entity::put(store, item, cond, answer.completion()).await {
                Ok(()) => Ok(Attempt::Done((plan.record, plan.delete, answer))),
                Err(e) => {
                    // A store that could not answer may have applied the put: keep the secrets
                    // (orphans at worst) rather than leave a record naming deleted ones.
                    if !e.is_transient() {
                        forget(secrets, &created).await;
                    }
                    match e {
                        StoreError::ConditionFailed => Ok(Attempt::Conflict),
                        other => Err(other.into()),
                    }
                }
            }
        })
        .await?;
    forget(secrets, &superseded).await;
    tracing::info!(
        agent_id = %agent_id, version = record.version, secrets = record.secret_names().len(),
        replaced = superseded.len(), "managed-provider settings saved"
    );
    Ok(answer)
}
