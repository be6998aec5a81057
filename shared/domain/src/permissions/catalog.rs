//! The catalog of permission keys: every key the spec names and every key an endpoint checks.
//! A key outside the catalog is rejected wherever a role is written.

/// Every permission key the service knows.
pub mod key {
    pub const TASKS_CREATE_TAGS: &str = "Tasks.createTags";
    pub const PROJECTS_EDIT: &str = "Projects.edit";
    pub const PROJECTS_MANAGE_COMPONENTS: &str = "Projects.manageComponents";
    pub const PROJECTS_MANAGE_DOCUMENTATION: &str = "Projects.manageDocumentation";
    pub const PROJECTS_MANAGE_MANUAL_POSITIONS: &str = "Projects.manageManualPositions";
    pub const PROJECTS_VIEW_ALL: &str = "Projects.viewAll";
    pub const PROJECT_COMPONENTS_LIBRARY_EDIT: &str = "ProjectComponentsLibrary.edit";
    pub const PRODUCT_CATALOG_EDIT: &str = "ProductCatalog.edit";
    pub const INVOICES_MANAGE: &str = "Invoices.manage";
    pub const WS_SETTINGS_MANAGE_SETTINGS: &str = "WsSettings.manageSettings";
    pub const WS_SETTINGS_MANAGE_ROLES: &str = "WsSettings.manageRoles";
    pub const WS_SETTINGS_MANAGE_TASK_SETTINGS: &str = "WsSettings.manageTaskSettings";
    pub const PUBLIC_API_ALLOW_IMPOSTER_MODE: &str = "PublicApi.allowImposterMode";
}

/// One entry of the catalog.
#[derive(Debug)]
pub struct Permission {
    pub key: &'static str,
    /// Whether a guest role may hold it. Workspace administration, billing, the workspace-wide
    /// component library and imposter mode never go to external users.
    pub guest_allowed: bool,
    pub description: &'static str,
}

pub const CATALOG: &[Permission] = &[
    Permission {
        key: key::TASKS_CREATE_TAGS,
        guest_allowed: true,
        description: "Create, recolour and delete task tags",
    },
    Permission { key: key::PROJECTS_EDIT, guest_allowed: true, description: "Edit projects" },
    Permission {
        key: key::PROJECTS_MANAGE_COMPONENTS,
        guest_allowed: true,
        description: "Manage the components of a project (and their tags)",
    },
    Permission {
        key: key::PROJECTS_MANAGE_DOCUMENTATION,
        guest_allowed: true,
        description: "Manage project documentation (and its tags)",
    },
    Permission {
        key: key::PROJECTS_MANAGE_MANUAL_POSITIONS,
        guest_allowed: true,
        description: "Add and edit manual positions of a project",
    },
    Permission {
        key: key::PROJECTS_VIEW_ALL,
        guest_allowed: false,
        description: "Access every project of the workspace, not only those the user is a member of",
    },
    Permission {
        key: key::PROJECT_COMPONENTS_LIBRARY_EDIT,
        guest_allowed: false,
        description: "Edit the workspace-wide project component library",
    },
    Permission {
        key: key::PRODUCT_CATALOG_EDIT,
        guest_allowed: false,
        description: "Create products in the workspace's product catalog",
    },
    Permission {
        key: key::INVOICES_MANAGE,
        guest_allowed: false,
        description: "Manage billing: potential invoices, subscriptions",
    },
    Permission {
        key: key::WS_SETTINGS_MANAGE_SETTINGS,
        guest_allowed: false,
        description: "Manage workspace settings (helpdesk mail accounts, integrations)",
    },
    Permission {
        key: key::WS_SETTINGS_MANAGE_ROLES,
        guest_allowed: false,
        description: "Create, edit and delete roles",
    },
    Permission {
        key: key::WS_SETTINGS_MANAGE_TASK_SETTINGS,
        guest_allowed: false,
        description: "Manage task settings such as work activities",
    },
    Permission {
        key: key::PUBLIC_API_ALLOW_IMPOSTER_MODE,
        guest_allowed: false,
        description: "Act as another user of the workspace through the API (imposter mode)",
    },
];

pub fn find(key: &str) -> Option<&'static Permission> {
    CATALOG.iter().find(|p| p.key == key)
}

pub fn keys() -> impl Iterator<Item = &'static str> {
    CATALOG.iter().map(|p| p.key)
}

/// Whether a role of the type may hold the key (unknown keys: never).
pub fn allowed_for(key: &str, guest: bool) -> bool {
    find(key).is_some_and(|p| !guest || p.guest_allowed)
}

/// The OpenAPI schema of a permission map: the catalog's keys, each true or false, no others.
/// Built from [`CATALOG`], so the document cannot drift from the keys the server accepts.
pub struct PermissionMapSchema;

impl utoipa::PartialSchema for PermissionMapSchema {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder, Schema, Type};
        let mut object = ObjectBuilder::new()
            .schema_type(Type::Object)
            .description(Some("Permission key to true (allowed) or false (disallowed); a missing key is inherited"));
        for permission in CATALOG {
            let entry = ObjectBuilder::new().schema_type(Type::Boolean).description(Some(permission.description));
            object = object.property(permission.key, entry);
        }
        Schema::Object(object.additional_properties(Some(AdditionalProperties::FreeForm(false))).build()).into()
    }
}

impl utoipa::ToSchema for PermissionMapSchema {
    fn name() -> std::borrow::Cow<'static, str> {
        "PermissionMap".into()
    }
}

/// The OpenAPI schema of a permission key: one of the catalog's keys.
pub struct PermissionKeySchema;

impl utoipa::PartialSchema for PermissionKeySchema {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
        let keys: Vec<&str> = keys().collect();
        Schema::Object(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .enum_values(Some(keys))
                .description(Some("A permission key"))
                .build(),
        )
        .into()
    }
}

impl utoipa::ToSchema for PermissionKeySchema {
    fn name() -> std::borrow::Cow<'static, str> {
        "PermissionKey".into()
    }
}

/// A permission key of the catalog, as a path parameter names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PermissionKey(&'static str);

impl PermissionKey {
    pub fn as_str(self) -> &'static str {
        self.0
    }
}

impl<'de> serde::Deserialize<'de> for PermissionKey {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let expected = "a permission key of the catalog, such as Invoices.manage";
        workapi_wire::deserialize_str(deserializer, expected, |text| find(text).map(|p| PermissionKey(p.key)))
    }
}

impl utoipa::PartialSchema for PermissionKey {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        workapi_wire::reference("PermissionKey")
    }
}

impl utoipa::ToSchema for PermissionKey {
    fn schemas(out: &mut Vec<(String, utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>)>) {
        out.push(("PermissionKey".into(), <PermissionKeySchema as utoipa::PartialSchema>::schema()));
    }
}

/// A permission map in a request body: an object of booleans. Whether its keys are catalog
/// keys the role may hold is a rule of the role (`roles::invalid_entries`), reported with the
/// role's other problems.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PermissionEntries(pub super::roles::PermissionMap);

impl workapi_wire::Field for PermissionEntries {
    fn read(value: &serde_json::Value, at: &workapi_wire::At, errors: &mut workapi_wire::Errors) -> Option<Self> {
        let name = at.name();
        let Some(map) = value.as_object() else {
            errors.add(at, format!("{name} must be an object of permission key to true or false"));
            return None;
        };
        let mut entries = super::roles::PermissionMap::new();
        let mut valid = true;
        for (key, value) in map {
            match value.as_bool() {
                Some(allow) => {
                    entries.insert(key.clone(), allow);
                }
                None => {
                    errors.add(at, format!("{name}.{key} must be true or false"));
                    valid = false;
                }
            }
        }
        valid.then_some(PermissionEntries(entries))
    }

    fn schema() -> workapi_wire::SchemaRef {
        workapi_wire::reference("PermissionMap")
    }

    fn schemas(out: &mut workapi_wire::Schemas) {
        out.push(("PermissionMap".into(), <PermissionMapSchema as utoipa::PartialSchema>::schema()));
    }
}
