//! Imposter mode (spec §5.5, DESIGN §3): a caller holding `PublicApi.allowImposterMode` may act
//! as another user of the same workspace (`LT_IMPOSTER_USER_ID`) and move the business clock
//! (`LT_CUSTOM_NOW`). The token's owner keeps their permissions, scopes and rate-limit bucket;
//! security clocks never move. Header names are case-insensitive; the hyphenated spellings
//! (`LT-Imposter-User-Id`, `LT-Custom-Now`) are accepted too, for proxies that drop
//! underscores.

use super::Caller;
use crate::error::ApiError;
use axum::http::request::Parts;
use uuid::Uuid;
use workapi_domain::identity::{self, User};
use workapi_domain::permissions::{Requirement, key};
use workapi_store::{Store, StoreResult};
use workapi_wire::calendar;

pub const IMPOSTER_USER_HEADER: &str = "LT_IMPOSTER_USER_ID";
pub const CUSTOM_NOW_HEADER: &str = "LT_CUSTOM_NOW";

/// The header's value under either spelling; a value that is not text is a 400.
fn header<'a>(parts: &'a Parts, name: &str) -> Result<Option<&'a str>, ApiError> {
    let hyphenated = name.replace('_', "-");
    match parts.headers.get(name).or_else(|| parts.headers.get(hyphenated.as_str())) {
        None => Ok(None),
        Some(value) => {
            value.to_str().map(|v| Some(v.trim())).map_err(|_| ApiError::field(name, format!("{name} must be text")))
        }
    }
}

/// The user the request names to act as, when its header holds a user id: authentication reads
/// it concurrently with the caller's own user, before [`apply`] checks that the caller may
/// impersonate at all (a read wasted on a refused request, never a leak: `apply` decides).
pub(super) fn named_target(parts: &Parts) -> Option<Uuid> {
    header(parts, IMPOSTER_USER_HEADER).ok().flatten().and_then(|text| Uuid::parse_str(text).ok())
}

/// Applies imposter mode to an authenticated caller. `prefetched` is the read of
/// [`named_target`]'s user, when authentication made it.
pub(super) async fn apply(
    caller: &mut Caller,
    parts: &Parts,
    store: &dyn Store,
    prefetched: Option<(Uuid, StoreResult<Option<User>>)>,
) -> Result<(), ApiError> {
    let target = header(parts, IMPOSTER_USER_HEADER)?;
    let custom_now = header(parts, CUSTOM_NOW_HEADER)?;
    if target.is_none() && custom_now.is_none() {
        return Ok(());
    }
    caller.authorize(Requirement::Permission(key::PUBLIC_API_ALLOW_IMPOSTER_MODE))?;
    if let Some(text) = custom_now {
        caller.business_now = calendar::parse_instant(text).ok_or_else(|| {
            ApiError::field(CUSTOM_NOW_HEADER, format!("{CUSTOM_NOW_HEADER} must be {}", calendar::INSTANT_RANGE_TEXT))
        })?;
    }
    if let Some(text) = target {
        let id =
            Uuid::parse_str(text).map_err(|_| ApiError::field(IMPOSTER_USER_HEADER, "must be a user id (UUID)"))?;
        // Another workspace's user is indistinguishable from no user at all.
        let read = match prefetched {
            Some((named, read)) if named == id => read,
            _ => identity::get_user(store, caller.workspace_id, id).await,
        };
        let user = read?
            .filter(|u| u.is_active)
            .ok_or_else(|| ApiError::not_found("The imposter user does not exist in this workspace"))?;
        caller.impersonated_by = Some(caller.user.id);
        caller.user = user;
    }
    Ok(())
}
