//! The `billing` function (spec §2.5a, §2.7, §4.7, §4.8; docs/billing.md): subscription
//! billings of a project, the potential invoices computed from them, from unbilled time and
//! from the project's manual positions and imported products, and support contingents with their balances. The date and money maths are plain functions
//! (`periods`, `subscriptions::rows`, `contingents::balance`, `potential_invoices::compute`)
//! with table and property tests.
//!
//! Routing: `/billing/…` is this function's own prefix. The project-scoped operations
//! (`/projects/{projectId}/subscription-billings`, `/projects/{projectId}/support-contingents`)
//! are more specific resources that API Gateway sends here rather than to the projects
//! function (docs/billing.md, "Routing").

pub mod contingents;
pub mod invoices;
pub mod potential_invoices;
pub mod subscriptions;
pub mod world;

/// The calendar maths, shared with the invoice lines of the domain floor.
pub use workapi_domain::periods;

use serde::Deserialize;
use time::Date;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;
use workapi_domain::project::{self, AccessError, Project};
use workapi_kit::entity::Entity;
use workapi_kit::events::{Emits, types};
use workapi_kit::function::{Function, Needs, Route};
/// The `{success: true}` answer of the billing writes (spec §4.8).
pub use workapi_kit::http::Success;
use workapi_kit::idempotency::idempotent;
use workapi_kit::openapi::ApiTag;
use workapi_kit::{ApiError, ApiResult, Caller};
use workapi_store::Store;

pub const FUNCTION: Function = Function {
    name: "billing",
    prefixes: &["/billing", "/projects/{projectId}/subscription-billings", "/projects/{projectId}/support-contingents"],
    tags: &[ApiTag {
        name: "billing",
        description: "Subscription billings of a project, the potential invoices computed from them and from unbilled \
                      time by the business clock, issuing them as numbered invoices (cancelled by credit notes), and \
                      support contingents with their balances",
    }],
    api,
    entities: &[
        subscriptions::SubscriptionBillingRecord::KIND,
        potential_invoices::PotentialInvoiceRecord::KIND,
        workapi_domain::billing::IssuedInvoiceRecord::KIND,
    ],
    emits: &[
        Emits { operation: "createSubscriptionBilling", events: &[types::SUBSCRIPTION_BILLING_CREATED] },
        Emits { operation: "updatePotentialInvoice", events: &[types::POTENTIAL_INVOICE_UPDATED] },
        Emits { operation: "setPotentialInvoiceQuantity", events: &[types::POTENTIAL_INVOICE_UPDATED] },
        Emits { operation: "issuePotentialInvoice", events: &[types::INVOICE_ISSUED] },
        Emits { operation: "cancelInvoice", events: &[types::INVOICE_CANCELLED] },
    ],
    needs: Needs {
        summary: "subscription billings, potential invoices, issued invoices, support contingents",
        routes: &[
            Route::new("Billing", "/billing/{proxy+}"),
            Route {
                event: "SubscriptionBillings",
                path: "/projects/{projectId}/subscription-billings",
                note: "Static children of the projects function's /projects/{projectId}: API Gateway\n\
                       prefers them to its {proxy+} sibling (docs/billing.md, \"Routing\").",
            },
            Route::new("SubscriptionBillingsProxy", "/projects/{projectId}/subscription-billings/{proxy+}"),
            Route::new("SupportContingents", "/projects/{projectId}/support-contingents"),
            Route::new("SupportContingentsProxy", "/projects/{projectId}/support-contingents/{proxy+}"),
        ],
        ..Needs::DATA
    },
};

/// `idempotent(…)`: the subscription-billing create, the issue and the cancellation
/// (Idempotency-Key, docs/conventions.md).
/// Schemas only events name (docs/events.md).
#[derive(utoipa::OpenApi)]
#[openapi(components(schemas(potential_invoices::PotentialInvoiceSettings)))]
struct EventSchemas;

fn api() -> OpenApiRouter<workapi_kit::AppState> {
    OpenApiRouter::with_openapi(<EventSchemas as utoipa::OpenApi>::openapi())
        .routes(idempotent(routes!(
            subscriptions::list_subscription_billings,
            subscriptions::create_subscription_billing
        )))
        .routes(routes!(contingents::list_support_contingents))
        .routes(routes!(potential_invoices::list_potential_invoices))
        .routes(routes!(potential_invoices::get_potential_invoice, potential_invoices::update_potential_invoice))
        .routes(routes!(potential_invoices::set_quantity))
        .routes(idempotent(routes!(invoices::issue_potential_invoice)))
        .routes(routes!(invoices::list_invoices))
        .routes(routes!(invoices::get_invoice))
        .routes(idempotent(routes!(invoices::cancel_invoice)))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[serde(rename_all = "camelCase")]
pub struct ProjectPath {
    /// Project id
    #[param(example = "5d8e4c1a-6b2f-4e7a-9c3d-1f2a3b4c5d6e")]
    project_id: Uuid,
}

/// The project, or 404 whether it is missing or the caller may not access it (spec §4.8:
/// "404 project not found or access denied").
pub async fn project_or_404(store: &dyn Store, caller: &Caller, id: Uuid) -> ApiResult<Project> {
    project::accessible(store, caller.viewer(), id).await.map(|r| r.project).map_err(|e| match e {
        AccessError::NotFound(_) | AccessError::Denied => ApiError::not_found("Project not found"),
        AccessError::Store(e) => e.into(),
    })
}

/// The project of a potential invoice or an invoice: `missing()` (its 404) when it is not in
/// the caller's workspace, 403 without access to it.
pub async fn project_of(store: &dyn Store, caller: &Caller, id: Uuid, missing: fn() -> ApiError) -> ApiResult<Project> {
    match project::accessible(store, caller.viewer(), id).await {
        Ok(record) => Ok(record.project),
        Err(AccessError::NotFound(_)) => Err(missing()),
        Err(e) => Err(e.into()),
    }
}

/// The projects a billing list covers: `projectId`'s (404 missing, 403 no access), else every
/// project the caller may access.
pub async fn listed_projects(store: &dyn Store, caller: &Caller, project_id: Option<Uuid>) -> ApiResult<Vec<Project>> {
    Ok(match project_id {
        Some(id) => vec![project::accessible(store, caller.viewer(), id).await?.project],
        None => project::list_accessible(store, caller.viewer()).await?,
    })
}

/// Today by the business clock (UTC).
pub fn business_today(caller: &Caller) -> Date {
    caller.business_now.to_offset(time::UtcOffset::UTC).date()
}

/// What the unit tests of the billing maths share.
#[cfg(test)]
pub(crate) mod fixtures {
    use rust_decimal::Decimal;
    use uuid::Uuid;
    use workapi_domain::project::Project;

    /// Project 1, "Shop": 100/h, EUR, 19 % tax.
    pub fn project() -> Project {
        Project {
            id: Uuid::from_u128(1),
            name: "Shop".into(),
            customer_organization_id: None,
            express_quotations_enabled: false,
            hour_rate: Decimal::from(100),
            currency: "EUR".into(),
            tax_rate: Decimal::from(19),
        }
    }
}
