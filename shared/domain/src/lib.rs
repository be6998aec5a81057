//! Records that more than one function (or the operator seed) reads: one record type and one
//! key builder each (docs/projects.md, docs/data-model.md). A function's own entities stay in
//! the function.
//!
//! - [`organization`]: customer organizations (contacts are users with an `organizationId`).
//! - [`project`]: projects (members inside), their manual-position categories, and the access
//!   rule every project operation applies.
//! - [`catalog`]: catalog categories and catalog products (read by the project import), and
//!   the products imported into a project (read by billing).
//! - [`position`]: a project's manual positions (written by the projects function, read by
//!   billing).
//! - [`money`]: exact decimals serialised as JSON numbers.
//! - [`task`]: tasks (seeded), found by id or number, and their access rule (the project's).
//! - [`quotation`]: express quotations, their items generated from a task, their decisions.
//! - [`pricing`]: quotation arithmetic and its one rounding rule.
//! - [`billing`]: the seeded billing world: time entries, issued invoices, support contingents.
//! - [`periods`]: the calendar maths of billing (subscription periods, contingent periods).
//! - [`invoice_lines`]: the invoice lines of manual positions and imported products, and their
//!   stable ids.
//! - [`tag`]: tags (written by the tags function; referenced by helpdesk accounts).

pub mod billing;
pub mod catalog;
pub mod event;
pub mod invoice_lines;
pub mod money;
pub mod organization;
pub mod periods;
pub mod position;
pub mod pricing;
pub mod project;
pub mod quotation;
pub mod tag;
pub mod task;
pub mod webhook;

// The people side, read by every function: permissions and their resolution, identities
// (workspaces, users, tokens) and the bearer-token format.
pub mod identity;
pub mod permissions;
pub mod token;
