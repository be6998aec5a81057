//! Mail-account persistence: one item per account in the workspace partition
//! (`MAILACCT#<id>`), written whole with optimistic concurrency (`version`), so the index keys
//! of the automatic-pulling schedule (GSI1 `MAILPULL`) are always those of the written state.

use crate::account::{self, EmailAccount, MailAccountRecord, PULL_SCHEDULE_GSI1PK, SettingsChange};
use uuid::Uuid;
use workapi_kit::conditional::IfMatch;
use workapi_kit::entity::{self, Change, Entity};
use workapi_kit::paging::OrderKey;
use workapi_kit::{ApiError, ApiResult};
use workapi_store::keys::WsKeys;
use workapi_store::{Condition, Query, Store, StoreError, StoreResult, query_all};

pub async fn get(store: &dyn Store, keys: WsKeys, id: Uuid) -> ApiResult<Option<MailAccountRecord>> {
    Ok(entity::get(store, &account::key(keys, id)).await?)
}

fn not_found() -> ApiError {
    ApiError::not_found("Email account not found")
}

/// An account's place in the list: by e-mail address, case-insensitively, then id.
pub fn order(account: &MailAccountRecord) -> OrderKey {
    OrderKey::new().name(&account.email).id(account.id)
}

/// Every mail account of the workspace, by e-mail address.
pub async fn list(store: &dyn Store, keys: WsKeys) -> ApiResult<Vec<MailAccountRecord>> {
    let query = Query::table(keys.root_pk()).begins_with(<MailAccountRecord as Entity>::PREFIX);
    let mut accounts: Vec<MailAccountRecord> =
        query_all(store, query).await?.into_iter().map(entity::from_item).collect::<StoreResult<_>>()?;
    accounts.sort_by_cached_key(order);
    Ok(accounts)
}

/// Turns helpdesk on or off for an account, keeping its settings. Idempotent: an account
/// already in that state is returned as it is, unwritten.
pub async fn set_enabled(
    store: &dyn Store,
    keys: WsKeys,
    id: Uuid,
    enabled: bool,
    if_match: &IfMatch,
    event: &Event<'_>,
) -> ApiResult<MailAccountRecord> {
    modify(store, keys, id, if_match, event, |record| {
        if record.helpdesk_enabled == enabled {
            return Ok(None);
        }
        Ok(Some(MailAccountRecord { helpdesk_enabled: enabled, ..record.clone() }))
    })
    .await
}

/// Applies a settings change to a helpdesk-enabled account (a disabled one is 409: its
/// settings are hidden, so a change to them could not be seen).
pub async fn update_settings(
    store: &dyn Store,
    keys: WsKeys,
    id: Uuid,
    change: SettingsChange,
    if_match: &IfMatch,
    event: &Event<'_>,
) -> ApiResult<MailAccountRecord> {
    modify(store, keys, id, if_match, event, |record| {
        if !record.helpdesk_enabled {
            return Err(ApiError::conflict(
                "Helpdesk is disabled for this email account; enable it to change its settings",
            ));
        }
        let settings = record.settings.clone().apply(change.clone());
        Ok((settings != record.settings).then(|| MailAccountRecord { settings, ..record.clone() }))
    })
    .await
}

/// The event of a change, from the account as the API returns it.
pub type Event<'a> = dyn Fn(&EmailAccount) -> ApiResult<entity::Completion> + Send + Sync + 'a;

/// A read-modify-write of one account (`entity::modify_with`, with its `event`), if `if_match`
/// names the account as read. `change` returns the new record, or None when nothing is to be
/// written (then no event either).
async fn modify<F>(
    store: &dyn Store,
    keys: WsKeys,
    id: Uuid,
    if_match: &IfMatch,
    event: &Event<'_>,
    change: F,
) -> ApiResult<MailAccountRecord>
where
    F: Fn(&MailAccountRecord) -> ApiResult<Option<MailAccountRecord>>,
{
    let busy = "The email account is being changed concurrently; retry";
    let beside = |record: &MailAccountRecord| event(&record.view());
    entity::modify_with(
        store,
        &account::key(keys, id),
        keys,
        busy,
        |stored| {
            let record: MailAccountRecord = stored.ok_or_else(not_found)?;
            if_match.check(&record.view())?;
            Ok(match change(&record)? {
                Some(changed) => Change::Write(changed),
                None => Change::Keep(record),
            })
        },
        beside,
    )
    .await
}

/// Writes an account as given (the operator seed) unless it is stored so already (the
/// version aside). Whether it wrote.
pub async fn write(store: &dyn Store, keys: WsKeys, mut record: MailAccountRecord) -> ApiResult<bool> {
    let stored = get(store, keys, record.id).await?;
    if let Some(stored) = &stored {
        record.version = stored.version;
        if *stored == record {
            return Ok(false);
        }
        record.version += 1;
    }
    store.put(entity::to_item(&record, keys)?, Condition::None).await?;
    Ok(true)
}

/// One account in the automatic-pulling schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PullTarget {
    pub workspace_id: Uuid,
    pub account_id: Uuid,
}

/// The automatic-pulling schedule: every helpdesk-enabled account of every workspace (what the
/// mail puller reads each round). A disabled account is not in it.
pub async fn pull_schedule(store: &dyn Store) -> StoreResult<Vec<PullTarget>> {
    let items = query_all(store, Query::gsi1(PULL_SCHEDULE_GSI1PK)).await?;
    items
        .iter()
        .map(|item| {
            let sk = item.get(workapi_store::GSI1SK).and_then(|v| v.as_str()).unwrap_or_default();
            let (ws, account) = sk.split_once('#').unwrap_or_default();
            match (Uuid::try_parse(ws), Uuid::try_parse(account)) {
                (Ok(workspace_id), Ok(account_id)) => Ok(PullTarget { workspace_id, account_id }),
                _ => Err(StoreError::Backend(format!("corrupt pull schedule entry {sk:?}"))),
            }
        })
        .collect()
}
