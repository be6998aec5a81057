//! Seed files: the world the API's operations act on but cannot create (customer
//! organizations, contacts, projects, tasks, catalog categories and products), loaded by
//! `workapi seed load --workspace <id> FILE` and by the demo workspace. Format: docs/seed.md.
//!
//! The billing sections (support contingents, time entries, issued invoices) live in
//! `seed_billing`.
//!
//! Loading is idempotent: every entry is written as the file states it, an entity that is
//! already so is left alone (loading twice writes nothing), and nothing is ever deleted. The
//! whole file is validated before anything is written; each entity is written whole (one item,
//! or one transaction for a user with its e-mail guard, for a project with its categories and
//! for a task with its number guard).

use rust_decimal::Decimal;
use serde::Deserialize;
use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;
use uuid::Uuid;
use workapi_domain::catalog::{self, CatalogCategory};
use workapi_domain::identity::{self, User, UserKind};
use workapi_domain::organization::{self, Organization};
use workapi_domain::task::{self, TaskProductOption, TaskProductRecord, TaskRecord, Unit};
use workapi_domain::{money, project};
use workapi_kit::entity::{self, Entity};
use workapi_richtext::{self as richtext, Profile};
use workapi_store::keys::WsKeys;
use workapi_store::{Condition, Store, TxOp};

/// Most manual-position categories per project: the project and its categories are written in
/// one transaction (at most 100 items).
pub const MAX_CATEGORIES_PER_PROJECT: usize = 99;

/// A seed file. Unknown keys are refused, so a misspelt section is not silently skipped.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SeedFile {
    /// The format's version: 1.
    pub version: u32,
    #[serde(default)]
    pub organizations: Vec<OrganizationEntry>,
    #[serde(default)]
    pub contacts: Vec<ContactEntry>,
    #[serde(default)]
    pub catalog_categories: Vec<NamedEntry>,
    #[serde(default)]
    pub projects: Vec<ProjectEntry>,
    #[serde(default)]
    pub tasks: Vec<TaskEntry>,
    /// Each entry is the body of `POST /administration/product-catalog` plus an `id`.
    #[serde(default)]
    pub catalog_products: Vec<serde_json::Value>,
    /// Invoice lines (crate::seed_lines): each entry is the body of
    /// `POST /projects/{projectId}/manual-positions` plus `id`, `projectId`, `createdAt` and an
    /// optional `sort`.
    #[serde(default)]
    pub manual_positions: Vec<serde_json::Value>,
    /// Each entry is the body of `POST /projects/{projectId}/products` plus `id`, `projectId`
    /// and `createdAt`.
    #[serde(default)]
    pub project_products: Vec<serde_json::Value>,
    /// Agents (docs/agents.md).
    #[serde(default)]
    pub agents: Vec<crate::seed_agents::AgentEntry>,
    /// Saved provider API keys: their key material goes to the secret store.
    #[serde(default)]
    pub provider_api_keys: Vec<crate::seed_agents::ProviderKeyEntry>,
    /// Workspace skills of the agents.
    #[serde(default)]
    pub skills: Vec<crate::seed_agents::SkillEntry>,
    /// Billing (crate::seed_billing): retainer plans, booked time, issued invoices.
    #[serde(default)]
    pub support_contingents: Vec<crate::seed_billing::SupportContingentEntry>,
    #[serde(default)]
    pub time_entries: Vec<crate::seed_billing::TimeEntryEntry>,
    #[serde(default)]
    pub issued_invoices: Vec<crate::seed_billing::IssuedInvoiceEntry>,
    #[serde(default)]
    pub mail_accounts: Vec<MailAccountEntry>,
    #[serde(default)]
    pub notifications: Vec<NotificationEntry>,
}

/// A helpdesk mail account (spec §2.6; docs/helpdesk.md).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MailAccountEntry {
    pub id: Uuid,
    pub email: String,
    pub display_name: String,
    #[serde(default)]
    pub helpdesk_enabled: bool,
    /// Absent: no automatic reply, every task field inherited. Kept while helpdesk is off.
    #[serde(default)]
    pub settings: Option<MailSettingsEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MailSettingsEntry {
    #[serde(default)]
    pub send_default_reply: bool,
    /// HTML or Markdown (editor profile).
    #[serde(default)]
    pub default_reply_body: String,
    #[serde(default)]
    pub task_priority: Option<helpdesk::account::TaskPriority>,
    #[serde(default)]
    pub task_project_id: Option<Uuid>,
    #[serde(default)]
    pub task_status_id: Option<Uuid>,
    #[serde(default)]
    pub task_type_id: Option<Uuid>,
    #[serde(default)]
    pub task_assigned_id: Option<Uuid>,
    #[serde(default)]
    pub task_accountable_id: Option<Uuid>,
    #[serde(default)]
    pub task_tags_ids: Option<Vec<Uuid>>,
}

/// A notification of one user, named by id or by e-mail (the demo admin's id is drawn at the
/// first start, its e-mail is fixed).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NotificationEntry {
    pub id: Uuid,
    #[serde(default)]
    pub user_id: Option<Uuid>,
    #[serde(default)]
    pub user_email: Option<String>,
    pub title: String,
    #[serde(default)]
    pub body: String,
    /// ISO 8601 date-time.
    pub created_at: String,
    #[serde(default)]
    pub is_read: bool,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OrganizationEntry {
    pub id: Uuid,
    pub name: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NamedEntry {
    pub id: Uuid,
    pub name: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContactEntry {
    pub id: Uuid,
    pub organization_id: Uuid,
    pub name: String,
    pub email: String,
    #[serde(default = "yes")]
    pub is_active: bool,
    #[serde(default = "english")]
    pub language: String,
    /// A base role; contacts are external users, so the default is `_guest`.
    #[serde(default = "guest")]
    pub role: String,
}

fn yes() -> bool {
    true
}
fn english() -> String {
    "en".into()
}
fn guest() -> String {
    workapi_domain::permissions::GUEST.into()
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProjectEntry {
    pub id: Uuid,
    pub name: String,
    /// Null (or absent) for an internal project.
    #[serde(default)]
    pub customer_organization_id: Option<Uuid>,
    /// User ids: users of the workspace or contacts of this file.
    #[serde(default)]
    pub members: Vec<Uuid>,
    #[serde(with = "money")]
    pub hour_rate: Decimal,
    pub currency: String,
    #[serde(with = "money")]
    pub tax_rate: Decimal,
    #[serde(default)]
    pub express_quotations_enabled: bool,
    #[serde(default)]
    pub manual_position_categories: Vec<NamedEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TaskEntry {
    pub id: Uuid,
    /// Unique in the workspace, from 1.
    pub short_number: i64,
    /// A project of the file or of the workspace.
    pub project_id: Uuid,
    pub title: String,
    /// HTML or Markdown.
    #[serde(default)]
    pub description: String,
    #[serde(default, with = "money::option")]
    pub estimated_hours: Option<Decimal>,
    /// The task's own hour rate; absent or null means the project's.
    #[serde(default, with = "money::option")]
    pub hour_rate: Option<Decimal>,
    #[serde(default)]
    pub products: Vec<TaskProductEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TaskProductEntry {
    pub id: Uuid,
    pub title: String,
    /// HTML or Markdown (the product profile: tables allowed).
    #[serde(default)]
    pub description: String,
    #[serde(with = "money")]
    pub quantity: Decimal,
    pub unit: Unit,
    #[serde(with = "money")]
    pub unit_price: Decimal,
    #[serde(default)]
    pub options: Vec<TaskOptionEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TaskOptionEntry {
    pub id: Uuid,
    pub title: String,
    #[serde(with = "money")]
    pub unit_price: Decimal,
}

/// Why a seed file was refused: every problem, each naming its entry
/// (`projects[1].customerOrganizationId: no such organization`).
#[derive(Debug)]
pub struct SeedError(pub Vec<String>);

impl std::fmt::Display for SeedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the seed file is invalid:")?;
        for problem in &self.0 {
            write!(f, "\n  {problem}")?;
        }
        Ok(())
    }
}

impl std::error::Error for SeedError {}

/// What a load did, per section: written (created or changed) and unchanged entries.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Report(pub BTreeMap<&'static str, (usize, usize)>);

impl Report {
    fn count(&mut self, section: &'static str, written: bool) {
        let entry = self.0.entry(section).or_default();
        if written { entry.0 += 1 } else { entry.1 += 1 }
    }

    /// Entries written by this load (0 when the store already held the file).
    pub fn written(&self) -> usize {
        self.0.values().map(|(w, _)| w).sum()
    }
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut text = String::new();
        for (section, (written, unchanged)) in &self.0 {
            let _ = write!(text, "{section}: {written} written, {unchanged} unchanged; ");
        }
        f.write_str(text.trim_end_matches("; "))
    }
}

pub type SeedResult<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// Parses a seed file's text (structure and types; the references are checked by [`load`]).
pub fn parse(text: &str) -> Result<SeedFile, SeedError> {
    let file: SeedFile = serde_json::from_str(text).map_err(|e| SeedError(vec![format!("not a seed file: {e}")]))?;
    if file.version != 1 {
        return Err(SeedError(vec![format!("version: {} is not supported (use 1)", file.version)]));
    }
    Ok(file)
}

/// Validates the whole file against itself and the workspace, then writes it entity by entity.
/// A file with `providerApiKeys` needs the secret store: [`load_with_secrets`].
pub async fn load(store: &dyn Store, workspace_id: Uuid, file: &SeedFile) -> SeedResult<Report> {
    load_inner(store, None, workspace_id, file).await
}

/// [`load`], with the secret store that receives the key material of `providerApiKeys`.
pub async fn load_with_secrets(
    store: &dyn Store,
    secrets: &dyn workapi_kit::secrets::SecretStore,
    workspace_id: Uuid,
    file: &SeedFile,
) -> SeedResult<Report> {
    load_inner(store, Some(secrets), workspace_id, file).await
}

async fn load_inner(
    store: &dyn Store,
    secrets: Option<&dyn workapi_kit::secrets::SecretStore>,
    workspace_id: Uuid,
    file: &SeedFile,
) -> SeedResult<Report> {
    let mut problems = crate::seed_agents::validate(&file.agents, &file.provider_api_keys, &file.skills);
    if secrets.is_none() && !file.provider_api_keys.is_empty() {
        problems.push("providerApiKeys: their key material needs the secret store (seed::load_with_secrets)".into());
    }
    if !problems.is_empty() {
        return Err(Box::new(SeedError(problems)));
    }
    let workspace = identity::get_workspace(store, workspace_id)
        .await?
        .ok_or_else(|| format!("workspace {workspace_id} does not exist"))?;
    let keys = WsKeys::new(workspace.id);
    let Valid { products, lines, tasks, mail_accounts, notifications, billing } = validate(store, keys, file).await?;
    let mut report = Report::default();
    for entry in &file.organizations {
        let record = Organization { id: entry.id, name: entry.name.trim().to_owned() };
        report.count("organizations", put_if_changed(store, &record, keys).await?);
    }
    for entry in &file.contacts {
        let user = User {
            id: entry.id,
            workspace_id,
            email: entry.email.trim().to_owned(),
            name: entry.name.trim().to_owned(),
            role_id: entry.role.clone(),
            kind: UserKind::OrganizationMember,
            language: entry.language.to_lowercase(),
            is_active: entry.is_active,
            created_at: workapi_store::clock::now_rfc3339(),
            organization_id: Some(entry.organization_id),
        };
        report.count("contacts", identity::ensure_user(store, &user).await?);
    }
    for entry in &file.catalog_categories {
        let record = CatalogCategory { id: entry.id, name: entry.name.trim().to_owned() };
        report.count("catalogCategories", put_if_changed(store, &record, keys).await?);
    }
    for entry in &file.projects {
        report.count("projects", write_project(store, keys, entry).await?);
    }
    for record in &tasks {
        report.count("tasks", task::write(store, keys, record).await?);
    }
    for (id, draft) in products {
        let created = administration::catalog::products::create_with_id(store, keys, id, draft).await?;
        report.count("catalogProducts", created);
    }
    for record in &lines.positions {
        report.count("manualPositions", crate::seed_lines::write_position(store, keys, record).await?);
    }
    for import in &lines.products {
        report.count("projectProducts", crate::seed_lines::write_product(store, keys, import).await?);
    }
    for record in mail_accounts {
        report.count("mailAccounts", helpdesk::store::write(store, keys, record).await?);
    }
    for (notification, user_id) in notifications {
        report.count("notifications", account::notifications::write(store, keys, notification, user_id).await?);
    }
    for record in &billing.contingents {
        report.count("supportContingents", crate::seed_billing::write_contingent(store, keys, record).await?);
    }
    for record in &billing.time_entries {
        report.count("timeEntries", put_if_changed(store, record, keys).await?);
    }
    for record in &billing.invoices {
        report.count("issuedInvoices", crate::seed_billing::write_invoice(store, keys, record).await?);
    }
    for entry in &file.agents {
        report.count("agents", crate::seed_agents::write_agent(store, keys, entry).await?);
    }
    if let Some(secrets) = secrets {
        for entry in &file.provider_api_keys {
            report.count("providerApiKeys", crate::seed_agents::write_provider_key(store, secrets, keys, entry).await?);
        }
    }
    for entry in &file.skills {
        report.count("skills", crate::seed_agents::write_skill(store, keys, entry, Uuid::nil()).await?);
    }
    Ok(report)
}

/// Writes an entity unless the stored one equals it. Whether it wrote.
async fn put_if_changed<E: Entity + PartialEq>(store: &dyn Store, record: &E, scope: E::Scope) -> SeedResult<bool> {
    let existing: Option<E> = entity::get(store, &record.key(scope.clone())).await?;
    if existing.as_ref() == Some(record) {
        return Ok(false);
    }
    store.put(entity::to_item(record, scope)?, Condition::None).await?;
    Ok(true)
}

/// A project and its manual-position categories, in one transaction, unless all are stored
/// as the file states them.
async fn write_project(store: &dyn Store, keys: WsKeys, entry: &ProjectEntry) -> SeedResult<bool> {
    let record = project::ProjectRecord {
        project: project::Project {
            id: entry.id,
            name: entry.name.trim().to_owned(),
            customer_organization_id: entry.customer_organization_id,
            express_quotations_enabled: entry.express_quotations_enabled,
            hour_rate: entry.hour_rate,
            currency: entry.currency.clone(),
            tax_rate: entry.tax_rate,
        },
        member_ids: entry.members.clone(),
    };
    let categories: Vec<project::ManualPositionCategoryRecord> = entry
        .manual_position_categories
        .iter()
        .map(|c| project::ManualPositionCategoryRecord {
            category: project::ManualPositionCategory { id: c.id, name: c.name.trim().to_owned() },
            project_id: entry.id,
        })
        .collect();
    let mut unchanged = project::get(store, keys, entry.id).await?.as_ref() == Some(&record);
    for category in &categories {
        if !unchanged {
            break;
        }
        let stored = project::get_category(store, (keys, entry.id), category.category.id).await?;
        unchanged = stored.as_ref() == Some(category);
    }
    if unchanged {
        return Ok(false);
    }
    let mut ops = vec![TxOp::Put { item: entity::to_item(&record, keys)?, cond: Condition::None }];
    for category in &categories {
        ops.push(TxOp::Put { item: entity::to_item(category, keys)?, cond: Condition::None });
    }
    store.transact(ops).await?;
    Ok(true)
}

/// What a valid file writes besides its plain entries.
struct Valid {
    products: Vec<(Uuid, workapi_domain::catalog::ProductDefinition)>,
    lines: crate::seed_lines::Lines,
    tasks: Vec<TaskRecord>,
    mail_accounts: Vec<helpdesk::account::MailAccountRecord>,
    /// Each with the id of the user it belongs to.
    notifications: Vec<(account::notifications::Notification, Uuid)>,
    billing: crate::seed_billing::Records,
}

/// Every problem of the file, each naming its entry; the catalog products parsed through the
/// API's own body type and rules.
async fn validate(store: &dyn Store, keys: WsKeys, file: &SeedFile) -> SeedResult<Valid> {
    let mut problems = Vec::new();
    let mut check_name = |at: String, name: &str| {
        if name.trim().is_empty() || name.trim().chars().count() > 200 {
            problems.push(format!("{at}.name: must hold 1 to 200 characters"));
        }
    };
    for (i, e) in file.organizations.iter().enumerate() {
        check_name(format!("organizations[{i}]"), &e.name);
    }
    for (i, e) in file.contacts.iter().enumerate() {
        check_name(format!("contacts[{i}]"), &e.name);
    }
    for (i, e) in file.catalog_categories.iter().enumerate() {
        check_name(format!("catalogCategories[{i}]"), &e.name);
    }
    for (i, e) in file.projects.iter().enumerate() {
        check_name(format!("projects[{i}]"), &e.name);
        for (j, c) in e.manual_position_categories.iter().enumerate() {
            check_name(format!("projects[{i}].manualPositionCategories[{j}]"), &c.name);
        }
    }
    duplicates(&mut problems, "organizations", file.organizations.iter().map(|e| e.id));
    duplicates(&mut problems, "contacts", file.contacts.iter().map(|e| e.id));
    duplicates(&mut problems, "catalogCategories", file.catalog_categories.iter().map(|e| e.id));
    duplicates(&mut problems, "projects", file.projects.iter().map(|e| e.id));

    let organizations: HashSet<Uuid> = file.organizations.iter().map(|e| e.id).collect();
    let organization_exists = async |id: Uuid| -> SeedResult<bool> {
        Ok(organizations.contains(&id) || organization::get(store, keys, id).await?.is_some())
    };
    let mut emails = HashSet::new();
    for (i, e) in file.contacts.iter().enumerate() {
        if !organization_exists(e.organization_id).await? {
            problems.push(format!("contacts[{i}].organizationId: no such organization"));
        }
        let email = e.email.trim().to_lowercase();
        if !email.contains('@') || email.len() > 254 {
            problems.push(format!("contacts[{i}].email: {:?} is not an e-mail address", e.email));
        } else if !emails.insert(email.clone()) {
            problems.push(format!("contacts[{i}].email: {} appears twice in the file", e.email));
        } else if let Some(guard) = store.get(&keys.user_email(&email)).await?
            && guard.get("userId").and_then(|v| v.as_str()) != Some(e.id.to_string().as_str())
        {
            problems.push(format!("contacts[{i}].email: {} belongs to another user of the workspace", e.email));
        }
        if workapi_kit::input::Language::parse(&e.language).is_none() {
            problems.push(format!("contacts[{i}].language: {:?} is not an ISO 639-1 code", e.language));
        }
        if workapi_domain::permissions::base_role(&e.role).is_none() {
            problems.push(format!("contacts[{i}].role: {:?} is not a base role", e.role));
        }
    }
    let contacts: HashSet<Uuid> = file.contacts.iter().map(|e| e.id).collect();
    for (i, e) in file.projects.iter().enumerate() {
        let at = format!("projects[{i}]");
        if let Some(org) = e.customer_organization_id
            && !organization_exists(org).await?
        {
            problems.push(format!("{at}.customerOrganizationId: no such organization"));
        }
        if e.members.len() > project::MAX_MEMBERS {
            problems.push(format!("{at}.members: at most {} members", project::MAX_MEMBERS));
        }
        for (j, member) in e.members.iter().enumerate() {
            if !contacts.contains(member) && identity::get_user(store, keys.workspace_id(), *member).await?.is_none() {
                problems.push(format!("{at}.members[{j}]: no such user"));
            }
        }
        if let Err(why) = project_rules::check_amount(e.hour_rate, Decimal::from(workapi_domain::task::MAX_PRICE)) {
            problems.push(format!("{at}.hourRate: {why}"));
        }
        if let Err(why) = project_rules::check_amount(e.tax_rate, Decimal::ONE_HUNDRED) {
            problems.push(format!("{at}.taxRate: {why}"));
        }
        if !project_rules::is_currency_code(&e.currency) {
            problems.push(format!("{at}.currency: {:?} is not an ISO 4217 code (three capital letters)", e.currency));
        }
        if e.manual_position_categories.len() > MAX_CATEGORIES_PER_PROJECT {
            problems.push(format!("{at}.manualPositionCategories: at most {MAX_CATEGORIES_PER_PROJECT}"));
        }
        duplicates(
            &mut problems,
            &format!("{at}.manualPositionCategories"),
            e.manual_position_categories.iter().map(|c| c.id),
        );
    }
    let categories: HashSet<Uuid> = file.catalog_categories.iter().map(|e| e.id).collect();
    let mut products = Vec::new();
    let mut product_ids = HashSet::new();
    for (i, value) in file.catalog_products.iter().enumerate() {
        let at = format!("catalogProducts[{i}]");
        let id = value.get("id").and_then(|v| v.as_str()).and_then(|s| Uuid::parse_str(s).ok());
        let Some(id) = id else {
            problems.push(format!("{at}.id: a UUID is required"));
            continue;
        };
        if !product_ids.insert(id) {
            problems.push(format!("{at}.id: {id} appears twice"));
        }
        match administration::catalog::products::parse_draft(value) {
            Ok(draft) => {
                if !categories.contains(&draft.category_id)
                    && catalog::get_category(store, keys, draft.category_id).await?.is_none()
                {
                    problems.push(format!("{at}.categoryId: no such catalog category"));
                }
                products.push((id, draft));
            }
            Err(e) => report(&mut problems, &at, e),
        }
    }
    let projects: HashSet<Uuid> = file.projects.iter().map(|e| e.id).collect();
    let mut tasks = Vec::new();
    let mut numbers = HashSet::new();
    duplicates(&mut problems, "tasks", file.tasks.iter().map(|e| e.id));
    for (i, e) in file.tasks.iter().enumerate() {
        let at = format!("tasks[{i}]");
        if !projects.contains(&e.project_id) && project::get(store, keys, e.project_id).await?.is_none() {
            problems.push(format!("{at}.projectId: no such project"));
        }
        if !(1..=task_rules::MAX_SHORT_NUMBER).contains(&e.short_number) {
            problems.push(format!("{at}.shortNumber: must be from 1 to {}", task_rules::MAX_SHORT_NUMBER));
        } else if !numbers.insert(e.short_number) {
            problems.push(format!("{at}.shortNumber: {} appears twice in the file", e.short_number));
        } else if let Some(guard) = task::number_guard(store, keys, e.short_number).await?
            && guard.task_id != e.id
        {
            problems.push(format!("{at}.shortNumber: {} belongs to another task of the workspace", e.short_number));
        }
        match task_rules::record(e) {
            Ok(record) => tasks.push(record),
            Err(found) => problems.extend(found.into_iter().map(|p| format!("{at}.{p}"))),
        }
    }
    let mail_accounts = mail_rules::records(store, keys, file, &projects, &mut problems).await?;
    let notifications = notification_rules::records(store, keys, file, &mut problems).await?;
    let task_projects = file.tasks.iter().map(|t| (t.id, t.project_id)).collect();
    let billing = crate::seed_billing::validate(store, keys, file, &task_projects, &mut problems).await?;
    let lines = crate::seed_lines::validate(store, keys, file, &products, &mut problems).await?;
    if problems.is_empty() {
        Ok(Valid { products, lines, tasks, mail_accounts, notifications, billing })
    } else {
        Err(Box::new(SeedError(problems)))
    }
}

/// An entry's body refused by the API's rules: one problem per field, named under `at`.
pub(crate) fn report(problems: &mut Vec<String>, at: &str, e: workapi_kit::ApiError) {
    match e.errors {
        Some(errors) => {
            for (field, messages) in errors {
                problems.push(format!("{at}.{field}: {}", messages.join("; ")));
            }
        }
        None => problems.push(format!("{at}: {}", e.message)),
    }
}

/// The rules of seeded mail accounts: the API's own reference checks (helpdesk::references).
pub mod mail_rules {
    use super::*;
    use helpdesk::account::{MAX_TASK_TAGS, MailAccountRecord, StoredSettings};

    pub async fn records(
        store: &dyn Store,
        keys: WsKeys,
        file: &SeedFile,
        projects: &HashSet<Uuid>,
        problems: &mut Vec<String>,
    ) -> SeedResult<Vec<MailAccountRecord>> {
        duplicates(problems, "mailAccounts", file.mail_accounts.iter().map(|e| e.id));
        let mut emails = HashSet::new();
        let mut records = Vec::new();
        for (i, e) in file.mail_accounts.iter().enumerate() {
            let at = format!("mailAccounts[{i}]");
            let email = e.email.trim();
            if !email.contains('@') || email.len() > 254 {
                problems.push(format!("{at}.email: {:?} is not an e-mail address", e.email));
            } else if !emails.insert(email.to_lowercase()) {
                problems.push(format!("{at}.email: {email} appears twice in the file"));
            }
            let name = e.display_name.trim();
            if name.is_empty() || name.chars().count() > 200 {
                problems.push(format!("{at}.displayName: must hold 1 to 200 characters"));
            }
            let settings = match &e.settings {
                None => StoredSettings::default(),
                Some(s) => {
                    let body = richtext::to_idoc(&s.default_reply_body, Profile::Editor).unwrap_or_else(|why| {
                        problems.push(format!("{at}.settings.defaultReplyBody: {why}"));
                        richtext::Doc::empty()
                    });
                    if s.task_tags_ids.as_ref().is_some_and(|t| t.len() > MAX_TASK_TAGS) {
                        problems.push(format!("{at}.settings.taskTagsIds: at most {MAX_TASK_TAGS}"));
                    }
                    StoredSettings {
                        send_default_reply: s.send_default_reply,
                        default_reply_body: body,
                        task_priority: s.task_priority,
                        task_project_id: s.task_project_id,
                        task_status_id: s.task_status_id,
                        task_type_id: s.task_type_id,
                        task_assigned_id: s.task_assigned_id,
                        task_accountable_id: s.task_accountable_id,
                        task_tags_ids: s.task_tags_ids.clone(),
                    }
                }
            };
            let refs = helpdesk::references::References::of(&settings);
            for (field, messages) in helpdesk::references::problems(store, keys, &refs, projects).await? {
                for message in messages {
                    let why = message.split_once(": ").map_or(message.as_str(), |(_, why)| why);
                    problems.push(format!("{at}.settings.{field}: {why}"));
                }
            }
            records.push(MailAccountRecord {
                id: e.id,
                email: email.to_owned(),
                display_name: name.to_owned(),
                helpdesk_enabled: e.helpdesk_enabled,
                settings,
                version: 1,
            });
        }
        Ok(records)
    }
}

/// The rules of seeded notifications.
pub mod notification_rules {
    use super::*;
    use account::notifications::Notification;

    /// Longest title and body (characters).
    pub const MAX_TITLE: usize = 200;
    pub const MAX_BODY: usize = 2000;

    pub async fn records(
        store: &dyn Store,
        keys: WsKeys,
        file: &SeedFile,
        problems: &mut Vec<String>,
    ) -> SeedResult<Vec<(Notification, Uuid)>> {
        duplicates(problems, "notifications", file.notifications.iter().map(|e| e.id));
        let contacts: HashSet<Uuid> = file.contacts.iter().map(|c| c.id).collect();
        let mut records = Vec::new();
        for (i, e) in file.notifications.iter().enumerate() {
            let at = format!("notifications[{i}]");
            let user = match (e.user_id, &e.user_email) {
                (Some(id), None) => {
                    let known =
                        contacts.contains(&id) || identity::get_user(store, keys.workspace_id(), id).await?.is_some();
                    if !known {
                        problems.push(format!("{at}.userId: no such user"));
                    }
                    Some(id)
                }
                (None, Some(email)) => {
                    let folded = email.trim().to_lowercase();
                    let in_file = file.contacts.iter().find(|c| c.email.trim().to_lowercase() == folded).map(|c| c.id);
                    let stored = match in_file {
                        Some(id) => Some(id),
                        None => store
                            .get(&keys.user_email(&folded))
                            .await?
                            .and_then(|guard| guard.get("userId")?.as_str()?.parse().ok()),
                    };
                    if stored.is_none() {
                        problems.push(format!("{at}.userEmail: no user with e-mail {email} in the workspace"));
                    }
                    stored
                }
                _ => {
                    problems.push(format!("{at}: name the user by exactly one of userId and userEmail"));
                    None
                }
            };
            let title = e.title.trim();
            if title.is_empty() || title.chars().count() > MAX_TITLE {
                problems.push(format!("{at}.title: must hold 1 to {MAX_TITLE} characters"));
            }
            let body = e.body.trim();
            if body.chars().count() > MAX_BODY {
                problems.push(format!("{at}.body: at most {MAX_BODY} characters"));
            }
            let created_at = account::cursor::canonical_timestamp(e.created_at.trim());
            if created_at.is_none() {
                problems.push(format!("{at}.createdAt: {:?} is not an ISO 8601 date-time", e.created_at));
            }
            if let (Some(user), Some(created_at)) = (user, created_at) {
                let notification = Notification {
                    id: e.id,
                    title: title.to_owned(),
                    body: body.to_owned(),
                    read_at: e.is_read.then(|| created_at.clone()),
                    created_at,
                    is_read: e.is_read,
                };
                records.push((notification, user));
            }
        }
        Ok(records)
    }
}

/// The rules of a seeded task, as plain functions: every problem, by field path.
pub mod task_rules {
    use super::*;
    use workapi_domain::task::{MAX_ESTIMATED_HOURS, MAX_OPTIONS, MAX_PRICE, MAX_PRODUCTS, MAX_QUANTITY};

    /// Numbers up to 18 digits, the longest a path identifier reads.
    pub const MAX_SHORT_NUMBER: i64 = 999_999_999_999_999_999;

    fn title(problems: &mut Vec<String>, at: &str, text: &str) -> String {
        let text = text.trim();
        if text.is_empty() || text.chars().count() > 200 {
            problems.push(format!("{at}title: must hold 1 to 200 characters"));
        }
        text.to_owned()
    }

    fn rich(problems: &mut Vec<String>, at: &str, text: &str, profile: Profile) -> richtext::Doc {
        richtext::to_idoc(text, profile).unwrap_or_else(|e| {
            problems.push(format!("{at}description: {e}"));
            richtext::Doc::empty()
        })
    }

    fn amount(problems: &mut Vec<String>, at: &str, field: &str, value: Decimal, max: i64) {
        if let Err(why) = project_rules::check_amount(value, Decimal::from(max)) {
            problems.push(format!("{at}{field}: {why}"));
        }
    }

    /// The task a seed entry describes, or every problem of it.
    pub fn record(e: &TaskEntry) -> Result<TaskRecord, Vec<String>> {
        let mut problems = Vec::new();
        let task_title = title(&mut problems, "", &e.title);
        let description = rich(&mut problems, "", &e.description, Profile::Editor);
        if let Some(hours) = e.estimated_hours {
            amount(&mut problems, "", "estimatedHours", hours, MAX_ESTIMATED_HOURS);
        }
        if let Some(rate) = e.hour_rate {
            amount(&mut problems, "", "hourRate", rate, MAX_PRICE);
        }
        if e.products.len() > MAX_PRODUCTS {
            problems.push(format!("products: at most {MAX_PRODUCTS}"));
        }
        duplicates(&mut problems, "products", e.products.iter().map(|p| p.id));
        let mut products = Vec::new();
        for (j, p) in e.products.iter().enumerate() {
            let at = format!("products[{j}].");
            let product_title = title(&mut problems, &at, &p.title);
            let description = rich(&mut problems, &at, &p.description, Profile::Product);
            amount(&mut problems, &at, "quantity", p.quantity, MAX_QUANTITY);
            amount(&mut problems, &at, "unitPrice", p.unit_price, MAX_PRICE);
            if p.options.len() > MAX_OPTIONS {
                problems.push(format!("{at}options: at most {MAX_OPTIONS}"));
            }
            duplicates(&mut problems, &format!("{at}options"), p.options.iter().map(|o| o.id));
            let mut options = Vec::new();
            for (k, o) in p.options.iter().enumerate() {
                let at = format!("{at}options[{k}].");
                let option_title = title(&mut problems, &at, &o.title);
                amount(&mut problems, &at, "unitPrice", o.unit_price, MAX_PRICE);
                options.push(TaskProductOption { id: o.id, title: option_title, unit_price: o.unit_price.normalize() });
            }
            products.push(TaskProductRecord {
                id: p.id,
                title: product_title,
                description,
                quantity: p.quantity.normalize(),
                unit: p.unit,
                unit_price: p.unit_price.normalize(),
                options,
            });
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(TaskRecord {
            id: e.id,
            short_number: e.short_number,
            project_id: e.project_id,
            title: task_title,
            description,
            estimated_hours: e.estimated_hours.map(|h| h.normalize()),
            hour_rate: e.hour_rate.map(|r| r.normalize()),
            products,
        })
    }
}

fn duplicates(problems: &mut Vec<String>, section: &str, ids: impl Iterator<Item = Uuid>) {
    let mut seen = HashSet::new();
    for (i, id) in ids.enumerate() {
        if !seen.insert(id) {
            problems.push(format!("{section}[{i}].id: {id} appears twice"));
        }
    }
}

/// The rules of a seeded project's numbers, as plain functions.
pub mod project_rules {
    use rust_decimal::Decimal;

    /// An amount from 0 to `max` with at most two decimal places.
    pub fn check_amount(amount: Decimal, max: Decimal) -> Result<(), String> {
        if amount < Decimal::ZERO || amount > max {
            Err(format!("must be from 0 to {max}"))
        } else if amount.normalize().scale() > 2 {
            Err("at most two decimal places".into())
        } else {
            Ok(())
        }
    }

    pub fn is_currency_code(code: &str) -> bool {
        code.len() == 3 && code.bytes().all(|b| b.is_ascii_uppercase())
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn amounts_and_currencies() {
            assert!(check_amount(Decimal::new(9550, 2), Decimal::ONE_HUNDRED).is_ok());
            assert!(check_amount(Decimal::new(-1, 0), Decimal::ONE_HUNDRED).is_err());
            assert!(check_amount(Decimal::new(101, 0), Decimal::ONE_HUNDRED).is_err());
            assert!(check_amount(Decimal::new(1001, 3), Decimal::ONE_HUNDRED).is_err());
            assert!(check_amount(Decimal::new(1000, 3), Decimal::ONE_HUNDRED).is_ok());
            assert!(is_currency_code("EUR") && !is_currency_code("eur") && !is_currency_code("EURO"));
        }
    }
}
