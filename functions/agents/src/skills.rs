//! Workspace skills (spec §2.9): shared instructions that native custom agents and managed
//! hosted agents use. The spec shows no record; ours is defined in docs/agents.md: name,
//! description, instructions (agent rich text), enabled, a version that grows by one on every
//! edit, and timestamps.

use crate::fields::AgentInstructions;
use crate::records::{self, item_key};
use serde::{Deserialize, Serialize};
use uuid::Uuid;
use workapi_kit::conditional::IfMatch;
use workapi_kit::entity::{self, Attempt, Change, Created, Entity, EntityError, Versioned};
use workapi_kit::idempotency::Answer;
use workapi_kit::input::{Input, Integer, MultilineText, Patch, Text};
use workapi_kit::paging::OrderKey;
use workapi_kit::{ApiError, ApiResult};
use workapi_richtext::{self as richtext, Doc};
use workapi_store::clock;
use workapi_store::keys::WsKeys;
use workapi_store::{Condition, Key, Store, TxOp, Update};

pub const MAX_NAME_CHARS: usize = 100;
pub const MAX_DESCRIPTION_CHARS: usize = 1000;
/// Most skills per workspace: the managed-provider save reads them all in one query. Enforced
/// by the count item ([`SkillCount`]) in the write itself.
pub const MAX_SKILLS: usize = 500;

/// The stored skill; instructions as IDoc.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SkillRecord {
    pub id: Uuid,
    pub name: String,
    pub description: Option<String>,
    pub instructions: Doc,
    pub enabled: bool,
    pub version: i64,
    pub created_at: String,
    pub updated_at: String,
    pub created_by: Uuid,
    pub updated_by: Uuid,
}

impl Entity for SkillRecord {
    const TYPE: &'static str = "AgentSkill";
    const PREFIX: &'static str = "AGENTSKILL#";
    type Scope = WsKeys;

    fn key(&self, keys: WsKeys) -> Key {
        skill_key(keys, self.id)
    }
}

impl Versioned for SkillRecord {
    fn version(&self) -> i64 {
        self.version
    }
    fn set_version(&mut self, version: i64) {
        self.version = version;
    }
}

pub fn skill_key(keys: WsKeys, id: Uuid) -> Key {
    item_key(keys, SkillRecord::PREFIX, id)
}

/// How many skills the workspace holds: `WS#<ws>#AGENTS` / `COUNT#skills`, attribute `count`
/// (docs/data-model.md). Every skill is written in one transaction with its increment, which is
/// conditioned on the count being below [`MAX_SKILLS`]: concurrent creates can never pass the
/// cap together. Created on the first create from the skills already stored (written before
/// the counter: the seed's, or before this counter existed).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SkillCount {
    pub count: i64,
}

impl Entity for SkillCount {
    const TYPE: &'static str = "AgentSkillCount";
    const PREFIX: &'static str = "COUNT#";
    type Scope = WsKeys;

    fn key(&self, keys: WsKeys) -> Key {
        count_key(keys)
    }
}

/// The key of the workspace's skill count.
pub fn count_key(keys: WsKeys) -> Key {
    item_key(keys, SkillCount::PREFIX, "skills")
}

const COUNT: &str = "count";

const EXISTS: &str = "The skill exists already";

/// What [`insert`] came to when it did not fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inserted {
    /// The skill is written and counted.
    Written,
    /// Another skill has its id; nothing was written (the create answers 409, the seed skips it).
    Exists,
}

/// Writes a new skill and counts it, in one transaction: refused with 400 when the workspace
/// holds [`MAX_SKILLS`] already. `completion` (the idempotency record's) joins the transaction.
/// Used by the create and by the seed.
pub async fn insert(
    store: &dyn Store,
    keys: WsKeys,
    record: &SkillRecord,
    completion: Option<&entity::Completion>,
) -> ApiResult<Inserted> {
    let counter = count_key(keys);
    let limit = MAX_SKILLS as i64;
    entity::retry_on_conflict("Skills are being created concurrently; retry", |_| {
        let count = TxOp::Update {
            key: counter.clone(),
            update: Update::default().add(COUNT, 1),
            // Exists: an absent counter would start at 1 whatever is stored already.
            cond: Condition::All(vec![Condition::Exists, Condition::CounterBelow { attr: COUNT.into(), limit }]),
        };
        let counter = &counter;
        async move {
            let created = entity::create_with(store, record, keys, EXISTS, vec![count], completion).await;
            match created {
                Err(EntityError::Exists(_)) => Ok(Attempt::Done(Inserted::Exists)),
                Err(e) => Err(e.into()),
                Ok(Created::Done) => Ok(Attempt::Done(Inserted::Written)),
                Ok(Created::Contended) => Ok(Attempt::Conflict),
                Ok(Created::Refused(_)) if store.get(counter).await?.is_some() => {
                    Err(ApiError::field("body", format!("a workspace holds at most {MAX_SKILLS} skills")))
                }
                Ok(Created::Refused(_)) => {
                    // The workspace's first counted skill: count those stored, then again.
                    let stored = async { Ok(records::list::<SkillRecord>(store, keys).await?.len() as i64) };
                    entity::init_counter(store, counter, SkillCount::KIND, COUNT, stored).await?;
                    Ok(Attempt::Conflict)
                }
            }
        }
    })
    .await
}

/// A skill as the API returns it (instructions as HTML).
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(examples(json!({"id": "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d", "name": "Release notes",
    "description": "Writes release notes from merged changes", "instructions": "<p>Group changes by area.</p>",
    "enabled": true, "version": 3, "createdAt": "2026-11-20T09:00:00Z", "updatedAt": "2026-11-23T10:00:00Z"})))]
pub struct Skill {
    pub id: Uuid,
    pub name: String,
    /// Plain text, or null
    #[schema(required)]
    pub description: Option<String>,
    /// HTML
    pub instructions: String,
    pub enabled: bool,
    /// Starts at 1 and grows by one on every edit; a managed agent may pin a skill to one
    pub version: i64,
    #[schema(format = DateTime)]
    pub created_at: String,
    #[schema(format = DateTime)]
    pub updated_at: String,
}

impl workapi_kit::projection::Compact for Skill {
    const COMPACT: &'static [&'static str] = &["id", "name", "version"];
}

pub type SkillProjection = workapi_kit::projection::Projected<Skill>;

impl From<&SkillRecord> for Skill {
    fn from(r: &SkillRecord) -> Self {
        Skill {
            id: r.id,
            name: r.name.clone(),
            description: r.description.clone(),
            instructions: richtext::to_html(&r.instructions),
            enabled: r.enabled,
            version: r.version,
            created_at: r.created_at.clone(),
            updated_at: r.updated_at.clone(),
        }
    }
}

/// A new skill
#[derive(Input)]
#[input(example = serde_json::json!({"name": "Release notes", "description": "Writes release notes from merged changes",
    "instructions": "Group changes by **area**.", "enabled": true}))]
pub struct CreateSkillBody {
    pub name: Text<1, MAX_NAME_CHARS>,
    /// Plain text; absent or null for none
    pub description: Patch<MultilineText<1, MAX_DESCRIPTION_CHARS>>,
    /// Markdown, HTML or IDoc JSON
    pub instructions: AgentInstructions,
    /// Default true
    pub enabled: Option<bool>,
}

/// Changes to a skill: only the fields sent change
#[derive(Input)]
#[input(example = serde_json::json!({"enabled": false, "version": 3}))]
pub struct PatchSkillBody {
    pub name: Option<Text<1, MAX_NAME_CHARS>>,
    /// Null clears it
    pub description: Patch<MultilineText<1, MAX_DESCRIPTION_CHARS>>,
    /// Markdown, HTML or IDoc JSON
    pub instructions: Option<AgentInstructions>,
    pub enabled: Option<bool>,
    /// The version the change was made against: when it is no longer the skill's version the
    /// change is refused with 409 (optimistic concurrency). Without it, the change applies to
    /// whatever version is current.
    pub version: Option<Integer<1, { i64::MAX }>>,
}

/// Creates a skill; `respond` turns it into the answer, which the skill's put records (the
/// idempotency completion).
pub async fn create(
    store: &dyn Store,
    keys: WsKeys,
    body: CreateSkillBody,
    by: Uuid,
    respond: impl FnOnce(&SkillRecord) -> ApiResult<Answer>,
) -> ApiResult<Answer> {
    let now = clock::now_rfc3339();
    let record = SkillRecord {
        id: Uuid::new_v4(),
        name: body.name.into_string(),
        description: body.description.into_option().map(|d| d.into_string()),
        instructions: body.instructions.0,
        enabled: body.enabled.unwrap_or(true),
        version: 1,
        created_at: now.clone(),
        updated_at: now,
        created_by: by,
        updated_by: by,
    };
    let answer = respond(&record)?;
    match insert(store, keys, &record, answer.completion()).await? {
        Inserted::Written => Ok(answer),
        Inserted::Exists => Err(ApiError::conflict(EXISTS)),
    }
}

pub async fn get(store: &dyn Store, keys: WsKeys, id: Uuid) -> ApiResult<SkillRecord> {
    entity::get(store, &skill_key(keys, id)).await?.ok_or_else(not_found)
}

fn not_found() -> ApiError {
    ApiError::not_found("Skill not found")
}

/// A skill's place in the list: by name, case-insensitively, then id.
pub fn order(skill: &SkillRecord) -> OrderKey {
    OrderKey::new().name(&skill.name).id(skill.id)
}

/// Skills ordered by name.
pub async fn list(store: &dyn Store, keys: WsKeys) -> ApiResult<Vec<SkillRecord>> {
    let mut skills = records::list::<SkillRecord>(store, keys).await?;
    skills.sort_by_cached_key(order);
    Ok(skills)
}

/// Applies the sent fields as the skill's next version (`entity::modify`). A lost race is
/// re-run on the new version (so concurrent patches of different fields all land), unless the
/// client pinned `version`, which then no longer matches: 409.
pub async fn patch(
    store: &dyn Store,
    keys: WsKeys,
    id: Uuid,
    body: PatchSkillBody,
    by: Uuid,
    if_match: &IfMatch,
    event: impl Fn(&Skill) -> ApiResult<entity::Completion>,
) -> ApiResult<SkillRecord> {
    let pinned = body.version.map(|v| v.0);
    let now = clock::now_rfc3339();
    let busy = "The skill is being changed concurrently; retry";
    let beside = |record: &SkillRecord| event(&Skill::from(record));
    entity::modify_with(
        store,
        &skill_key(keys, id),
        keys,
        busy,
        |stored| {
            let current: SkillRecord = stored.ok_or_else(not_found)?;
            if_match.check(&Skill::from(&current))?;
            if let Some(pinned) = pinned
                && pinned != current.version
            {
                return Err(ApiError::conflict(format!(
                    "The skill is at version {}, not {pinned}; read it again and retry",
                    current.version
                )));
            }
            Ok(match patched(&current, &body, &now, by) {
                Some(changed) => Change::Write(changed),
                None => Change::Keep(current),
            })
        },
        beside,
    )
    .await
}

/// The skill with the sent fields applied and the edit stamped; None when no field was sent
/// (nothing to write: the skill stays as it is, unstamped).
fn patched(current: &SkillRecord, body: &PatchSkillBody, now: &str, by: Uuid) -> Option<SkillRecord> {
    let sent = body.name.is_some()
        || !matches!(body.description, Patch::Absent)
        || body.instructions.is_some()
        || body.enabled.is_some();
    if !sent {
        return None;
    }
    let mut changed = current.clone();
    if let Some(name) = &body.name {
        changed.name = name.as_str().to_owned();
    }
    match &body.description {
        Patch::Absent => {}
        Patch::Null => changed.description = None,
        Patch::Value(text) => changed.description = Some(text.as_str().to_owned()),
    }
    if let Some(instructions) = &body.instructions {
        changed.instructions = instructions.0.clone();
    }
    if let Some(enabled) = body.enabled {
        changed.enabled = enabled;
    }
    changed.updated_at = now.to_owned();
    changed.updated_by = by;
    Some(changed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn skill() -> SkillRecord {
        let by = Uuid::nil();
        SkillRecord {
            id: Uuid::nil(),
            name: "Review".into(),
            description: Some("Reviews code".into()),
            instructions: richtext::to_idoc("Be kind", richtext::Profile::Agent).unwrap(),
            enabled: true,
            version: 3,
            created_at: "2026-01-01T00:00:00Z".into(),
            updated_at: "2026-01-01T00:00:00Z".into(),
            created_by: by,
            updated_by: by,
        }
    }

    #[test]
    fn a_patch_changes_the_sent_fields_and_stamps_the_edit_and_an_empty_one_writes_nothing() {
        let editor = Uuid::from_u128(7);
        let at = "2026-02-02T00:00:00Z";
        let empty: PatchSkillBody = workapi_kit::input::parse(&json!({"version": 3})).unwrap();
        assert_eq!(patched(&skill(), &empty, at, editor), None);
        let body: PatchSkillBody = workapi_kit::input::parse(&json!({"description": null, "enabled": false})).unwrap();
        let changed = patched(&skill(), &body, at, editor).unwrap();
        let expected =
            SkillRecord { description: None, enabled: false, updated_at: at.into(), updated_by: editor, ..skill() };
        assert_eq!(changed, expected);
    }
}
