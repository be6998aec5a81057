//! The `contacts` function: the contacts of customer organizations, i.e. the workspace's users
//! of kind `organizationMember` (spec §1's `contacts` tag; docs/projects.md). Its own function
//! because the spec groups operations by tag and `/contacts` is its own path prefix.

use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;
use workapi_domain::identity::{self, User, UserKind};
use workapi_domain::organization::{self, Organization};
use workapi_domain::permissions::Requirement;
use workapi_kit::entity::Entity;
use workapi_kit::function::{Function, Needs, Route};
use workapi_kit::openapi::ApiTag;
use workapi_kit::paging::{OrderKey, PageParams, Paged, Paging};
use workapi_kit::request::Query;
use workapi_kit::{ApiError, ApiResult, AppState, Caller};

pub const FUNCTION: Function = Function {
    name: "contacts",
    prefixes: &["/contacts"],
    tags: &[ApiTag {
        name: "contacts",
        description: "Contacts: the members of the workspace's customer organizations, active or not",
    }],
    api,
    entities: &[Organization::KIND],
    emits: &[],
    needs: Needs {
        summary: "customer-organization members",
        routes: &[Route::new("ContactsRoot", "/contacts"), Route::new("Contacts", "/contacts/{proxy+}")],
        ..Needs::DATA
    },
};

fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_contacts))
}

/// A contact: a member of a customer organization.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(examples(json!({"id": "4b6d8f0a-2c4e-4a6b-8d0f-2a4c6e8a0b2d", "name": "Erika Mustermann",
    "email": "erika@customer.example", "organizationId": "8a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d", "isActive": true})))]
pub struct Contact {
    pub id: Uuid,
    pub name: String,
    pub email: String,
    pub organization_id: Uuid,
    /// Inactive contacts cannot sign in and are not offered for new quotations or invoices
    pub is_active: bool,
}

/// The contact view of a user: organization members that belong to an organization.
pub fn contact_of(user: &User) -> Option<Contact> {
    let organization_id = user.organization_id?;
    (user.kind == UserKind::OrganizationMember).then(|| Contact {
        id: user.id,
        name: user.name.clone(),
        email: user.email.clone(),
        organization_id,
        is_active: user.is_active,
    })
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct ContactFilter {
    /// Only the contacts of this customer organization (404 when it does not exist)
    #[param(example = "8a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d")]
    organization_id: Option<Uuid>,
}

/// List contacts
///
/// The contacts of the workspace's customer organizations (active and inactive), or of one
/// organization, ordered by name. For employees of the workspace only.
#[utoipa::path(get, path = "/contacts", operation_id = "listContacts", tag = "contacts", params(ContactFilter, PageParams),
    responses((status = 200, description = "The contacts, by name", body = [Contact])))]
async fn list_contacts(
    State(state): State<AppState>,
    caller: Caller,
    Query(filter): Query<ContactFilter>,
    paging: Paging,
) -> ApiResult<Paged<Contact>> {
    caller.authorize(Requirement::Employee)?;
    let store = state.store();
    if let Some(id) = filter.organization_id
        && organization::get(store, caller.keys(), id).await?.is_none()
    {
        return Err(ApiError::not_found("Organization not found"));
    }
    let contacts: Vec<Contact> = identity::list_users(store, caller.workspace_id)
        .await?
        .iter()
        .filter_map(contact_of)
        .filter(|c| filter.organization_id.is_none_or(|id| c.organization_id == id))
        .collect();
    paging.window(contacts, |c| OrderKey::new().name(&c.name).id(c.id))?.answer()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_organization_members_with_an_organization_are_contacts() {
        let org = Uuid::new_v4();
        let user = User {
            id: Uuid::new_v4(),
            workspace_id: Uuid::new_v4(),
            email: "c@x.example".into(),
            name: "C".into(),
            role_id: "_guest".into(),
            kind: UserKind::OrganizationMember,
            language: "en".into(),
            is_active: false,
            created_at: String::new(),
            organization_id: Some(org),
        };
        assert_eq!(contact_of(&user).map(|c| (c.organization_id, c.is_active)), Some((org, false)));
        assert!(contact_of(&User { organization_id: None, ..user.clone() }).is_none());
        assert!(contact_of(&User { kind: UserKind::Employee, ..user }).is_none());
    }
}
