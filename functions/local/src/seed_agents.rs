//! The agents' sections of a seed file (docs/seed.md): agents, saved provider API keys and
//! workspace skills. The key material of a provider key goes to the secret store under a fresh
//! name; the table keeps the name, the label and (for long keys) the last four characters.

use agents::records::{self, Agent, ProviderApiKey, new_secret_name};
use agents::skills::{self, SkillRecord};
use serde::Deserialize;
use std::collections::HashSet;
use uuid::Uuid;
use workapi_kit::entity;
use workapi_kit::secrets::{SecretStore, SecretValue};
use workapi_richtext::{self as richtext, Profile};
use workapi_store::keys::WsKeys;
use workapi_store::{Condition, Store};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentEntry {
    pub id: Uuid,
    pub name: String,
}

/// A saved provider API key. `key` is the key material (8 to 4096 printable ASCII characters):
/// it goes to the secret store only, and a file holding one is a secret itself.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProviderKeyEntry {
    pub id: Uuid,
    pub label: String,
    pub key: String,
}

impl std::fmt::Debug for ProviderKeyEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderKeyEntry").field("id", &self.id).field("label", &self.label).finish_non_exhaustive()
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SkillEntry {
    pub id: Uuid,
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    /// Markdown, HTML or IDoc JSON (the agent profile)
    pub instructions: serde_json::Value,
    #[serde(default = "yes")]
    pub enabled: bool,
}

fn yes() -> bool {
    true
}

/// Every problem of the agents' sections, each naming its entry.
pub fn validate(agents: &[AgentEntry], keys: &[ProviderKeyEntry], skills: &[SkillEntry]) -> Vec<String> {
    let mut problems = Vec::new();
    let name_ok = |name: &str, max: usize| !name.trim().is_empty() && name.trim().chars().count() <= max;
    for (i, a) in agents.iter().enumerate() {
        if !name_ok(&a.name, 200) {
            problems.push(format!("agents[{i}].name: must hold 1 to 200 characters"));
        }
    }
    for (i, k) in keys.iter().enumerate() {
        if !name_ok(&k.label, 200) {
            problems.push(format!("providerApiKeys[{i}].label: must hold 1 to 200 characters"));
        }
        if !(8..=4096).contains(&k.key.len()) || !k.key.bytes().all(|b| b.is_ascii_graphic()) {
            problems.push(format!("providerApiKeys[{i}].key: must be 8 to 4096 printable ASCII characters"));
        }
    }
    for (i, s) in skills.iter().enumerate() {
        if !name_ok(&s.name, skills::MAX_NAME_CHARS) {
            problems.push(format!("skills[{i}].name: must hold 1 to {} characters", skills::MAX_NAME_CHARS));
        }
        if s.description.as_ref().is_some_and(|d| !name_ok(d, skills::MAX_DESCRIPTION_CHARS)) {
            problems
                .push(format!("skills[{i}].description: must hold 1 to {} characters", skills::MAX_DESCRIPTION_CHARS));
        }
        if let Err(e) = richtext::to_idoc_json(&s.instructions, Profile::Agent) {
            problems.push(format!("skills[{i}].instructions: {e}"));
        }
    }
    for (section, ids) in [
        ("agents", agents.iter().map(|e| e.id).collect::<Vec<_>>()),
        ("providerApiKeys", keys.iter().map(|e| e.id).collect()),
        ("skills", skills.iter().map(|e| e.id).collect()),
    ] {
        let mut seen = HashSet::new();
        for (i, id) in ids.into_iter().enumerate() {
            if !seen.insert(id) {
                problems.push(format!("{section}[{i}].id: {id} appears twice"));
            }
        }
    }
    problems
}

type SeedResult<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// An agent, written unless stored as the file states it. Whether it wrote.
pub async fn write_agent(store: &dyn Store, keys: WsKeys, entry: &AgentEntry) -> SeedResult<bool> {
    let record = Agent { id: entry.id, name: entry.name.trim().to_owned(), managed_provider_configured: false };
    let existing = records::get_agent(store, keys, entry.id).await?;
    if existing.as_ref().is_some_and(|e| e.name == record.name) {
        return Ok(false);
    }
    store.put(entity::to_item(&record, keys)?, Condition::None).await?;
    Ok(true)
}

/// A skill, created once (later edits through the API are kept). Whether it wrote.
pub async fn write_skill(store: &dyn Store, keys: WsKeys, entry: &SkillEntry, by: Uuid) -> SeedResult<bool> {
    if entity::get::<SkillRecord>(store, &skills::skill_key(keys, entry.id)).await?.is_some() {
        return Ok(false);
    }
    let now = workapi_store::clock::now_rfc3339();
    let record = SkillRecord {
        id: entry.id,
        name: entry.name.trim().to_owned(),
        description: entry.description.as_ref().map(|d| d.trim().to_owned()),
        instructions: richtext::to_idoc_json(&entry.instructions, Profile::Agent)?,
        enabled: entry.enabled,
        version: 1,
        created_at: now.clone(),
        updated_at: now,
        created_by: by,
        updated_by: by,
    };
    // Counted like a created skill, so the cap holds for seeded skills too.
    match skills::insert(store, keys, &record, None).await {
        Ok(skills::Inserted::Written) => Ok(true),
        Ok(skills::Inserted::Exists) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// A saved provider key: unchanged when its label and its stored key material equal the file's;
/// otherwise the key goes to a new secret, the record is written, and the secret it replaced
/// is deleted.
pub async fn write_provider_key(
    store: &dyn Store,
    secrets: &dyn SecretStore,
    keys: WsKeys,
    entry: &ProviderKeyEntry,
) -> SeedResult<bool> {
    let existing = records::get_provider_key(store, keys, entry.id).await?;
    if let Some(existing) = &existing
        && existing.label == entry.label.trim()
        && secrets.get(&existing.secret).await?.is_some_and(|v| v.expose() == entry.key)
    {
        return Ok(false);
    }
    let secret = new_secret_name(keys, &format!("provider-keys/{}", entry.id.simple()));
    secrets.create(&secret, &SecretValue::new(entry.key.clone())).await?;
    let record = ProviderApiKey {
        id: entry.id,
        label: entry.label.trim().to_owned(),
        secret,
        last_four: records::last_four(&entry.key),
    };
    store.put(entity::to_item(&record, keys)?, Condition::None).await?;
    if let Some(old) = existing {
        secrets.delete(&old.secret).await?;
    }
    Ok(true)
}
