//! The documented schemas of the managed-provider body: the objects the fields declare, with the
//! rules of [`crate::managed::plan`] that JSON Schema can say. Each case of a rule across fields
//! is one object of a `oneOf` or `anyOf` (its own fields required, the other cases' fields
//! `null` only: left out or null, as the API reads them); what depends on stored settings or on
//! other records (a kept credential, an existing key or skill, distinct ids) stays in the
//! descriptions.

use super::ManagedAgentInput;
use serde_json::json;
use utoipa::PartialSchema;
use utoipa::openapi::RefOr;
use utoipa::openapi::extensions::Extensions;
use utoipa::openapi::schema::{
    AnyOfBuilder, Discriminator, Object, ObjectBuilder, OneOfBuilder, Schema, SchemaType, Type,
};
use workapi_wire::{SchemaRef, Schemas, reference};

const EXISTING_CONFIG: &str = "ExistingAgentConfig";
const SERVICE_MANAGED_CONFIG: &str = "ServiceManagedAgentConfig";
const EXISTING_MANAGED_AGENT: &str = "ExistingManagedAgentInput";
const MANAGED_AGENT: &str = "ManagedAgentInput";
const MCP_SERVER_NO_AUTH: &str = "McpServerNoAuth";
const MCP_SERVER_BEARER: &str = "McpServerBearerAuth";
const MCP_SERVER_OAUTH: &str = "McpServerOAuth";

/// The body: a saved key and a raw key are not sent together (`not` both as values).
pub(super) fn save_body(mut body: Object, _: &mut Schemas) -> SchemaRef {
    let both = json!({
        "required": ["providerApiKeyId", "vendorApiKey"],
        "properties": {"providerApiKeyId": {"type": "string"}, "vendorApiKey": {"type": "string"}}
    });
    body.extensions.get_or_insert_with(Extensions::default).insert("not".into(), both);
    RefOr::T(Schema::Object(body))
}

/// The configuration: one object per agentSource, told apart by it.
pub(super) fn config(mut generated: Object, components: &mut Schemas) -> SchemaRef {
    match generated.properties.get_mut("userVaultIds") {
        Some(RefOr::T(Schema::Array(vaults))) => vaults.unique_items = true,
        _ => unreachable!("userVaultIds is a list"),
    }
    let mut existing = generated.clone();
    existing.description = Some(
        "agentSource existing: an agent that exists at the provider, named by agentId and environmentId; \
         managedAgent (optional) takes no skills"
            .into(),
    );
    set(&mut existing, "agentSource", one_value("existing", "An agent that exists at the provider"));
    for (field, what) in [("agentId", "The provider's agent id"), ("environmentId", "The provider's environment id")] {
        retype(&mut existing, field, Type::String, what);
        existing.required.push(field.into());
    }
    set(
        &mut existing,
        "managedAgent",
        OneOfBuilder::new()
            .item(reference(EXISTING_MANAGED_AGENT))
            .item(null_only(None))
            .description(Some("Optional; without skills"))
            .into(),
    );

    let mut service = generated.clone();
    service.description = Some(
        "agentSource serviceManaged: the provider runs an agent the service defines (managedAgent); \
         agentId and environmentId are left out or null"
            .into(),
    );
    set(&mut service, "agentSource", one_value("serviceManaged", "The provider runs the agent managedAgent defines"));
    for field in ["agentId", "environmentId"] {
        set(&mut service, field, null_only(Some("Only for agentSource existing: leave out or null")));
    }
    set(&mut service, "managedAgent", workapi_wire::describe(reference(MANAGED_AGENT), "The agent to run"));
    service.required.push("managedAgent".into());

    // The managed agent of an existing source: the same object without skills.
    let mut without_skills = match ManagedAgentInput::schema() {
        RefOr::T(Schema::Object(object)) => object,
        _ => unreachable!("ManagedAgentInput is an object schema"),
    };
    if let Some(RefOr::T(Schema::Array(skills))) = without_skills.properties.get_mut("skills") {
        skills.max_items = Some(0);
        skills.description = Some("Only for agentSource serviceManaged: leave out or empty".into());
    }
    without_skills.description = Some("A managed agent of an existing agentSource: no skills".into());

    components.push((EXISTING_CONFIG.into(), RefOr::T(Schema::Object(existing))));
    components.push((SERVICE_MANAGED_CONFIG.into(), RefOr::T(Schema::Object(service))));
    components.push((EXISTING_MANAGED_AGENT.into(), RefOr::T(Schema::Object(without_skills))));
    let mut discriminator = Discriminator::new("agentSource");
    discriminator.mapping.insert("existing".into(), format!("#/components/schemas/{EXISTING_CONFIG}"));
    discriminator.mapping.insert("serviceManaged".into(), format!("#/components/schemas/{SERVICE_MANAGED_CONFIG}"));
    OneOfBuilder::new()
        .item(reference(EXISTING_CONFIG))
        .item(reference(SERVICE_MANAGED_CONFIG))
        .discriminator(Some(discriminator))
        .description(generated.description)
        .into()
}

/// An MCP server: one object per authMode (left out: none), each with its own credential and
/// the other modes' credentials null only. The objects exclude each other through authMode's
/// enum; they are an `anyOf`, since authMode may be left out (none) and so cannot be the
/// required property a linter looks for to see a `oneOf`'s cases apart.
pub(super) fn mcp_server(generated: Object, components: &mut Schemas) -> SchemaRef {
    let kept = "kept when left out if the stored server with this id (or URL) has one, else required";
    let mut none = generated.clone();
    none.description = Some("An MCP server without authentication (authMode none or left out)".into());
    set(&mut none, "authMode", one_value("none", "Default none"));
    set(&mut none, "bearerToken", null_only(Some("Only for authMode bearer: leave out or null")));
    set(&mut none, "oauthCredential", null_only(Some("Only for authMode oauth: leave out or null")));

    let mut bearer = generated.clone();
    bearer.description = Some("An MCP server that takes a bearer token".into());
    set(&mut bearer, "authMode", one_value("bearer", "A bearer token"));
    bearer.required.push("authMode".into());
    retype(&mut bearer, "bearerToken", Type::String, &format!("The token: {kept}"));
    set(&mut bearer, "oauthCredential", null_only(Some("Only for authMode oauth: leave out or null")));

    let mut oauth = generated;
    oauth.description = Some("An MCP server that takes OAuth credentials".into());
    set(&mut oauth, "authMode", one_value("oauth", "OAuth credentials"));
    oauth.required.push("authMode".into());
    set(&mut oauth, "bearerToken", null_only(Some("Only for authMode bearer: leave out or null")));
    set(
        &mut oauth,
        "oauthCredential",
        workapi_wire::describe(reference("OAuthCredentialInput"), &format!("The credentials: {kept}")),
    );

    let mut server = AnyOfBuilder::new().description(Some(
        "An MCP server. Its credentials are kept by `id`: a server sent without `id` takes the id of the stored \
         server with the same URL, else a new one. Ids are distinct. One object per authMode",
    ));
    for (name, object) in [(MCP_SERVER_NO_AUTH, none), (MCP_SERVER_BEARER, bearer), (MCP_SERVER_OAUTH, oauth)] {
        components.push((name.into(), RefOr::T(Schema::Object(object))));
        server = server.item(reference(name));
    }
    server.into()
}

fn set(object: &mut Object, field: &str, schema: SchemaRef) {
    assert!(object.properties.contains_key(field), "{field} is a field of the generated object");
    object.properties.insert(field.into(), schema);
}

/// A field that reads one value of its enum (a `oneOf` case).
fn one_value(value: &str, description: &str) -> SchemaRef {
    ObjectBuilder::new().schema_type(Type::String).enum_values(Some([value])).description(Some(description)).into()
}

/// A field another case takes: left out or null here.
fn null_only(description: Option<&str>) -> SchemaRef {
    ObjectBuilder::new().schema_type(Type::Null).description(description).into()
}

/// A nullable field that must be a value of `ty` in this case.
fn retype(object: &mut Object, field: &str, ty: Type, description: &str) {
    match object.properties.get_mut(field) {
        Some(RefOr::T(Schema::Object(property))) => {
            property.schema_type = SchemaType::Type(ty);
            property.description = Some(description.into());
        }
        _ => unreachable!("{field} is a nullable value in the generated object"),
    }
}
