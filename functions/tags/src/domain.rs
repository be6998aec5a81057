//! Tag rules (spec §2.5, §4.6) as plain functions.

use shared::ApiError;
use shared::permissions::{Requirement, key};

/// The seven tag types; each has its own partition and name space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TagType {
    Task,
    Project,
    ProjectComponent,
    Organization,
    Object,
    FormTemplate,
    ProjectDocumentation,
}

pub const TAG_TYPES: &[TagType] = &[
    TagType::Task,
    TagType::Project,
    TagType::ProjectComponent,
    TagType::Organization,
    TagType::Object,
    TagType::FormTemplate,
    TagType::ProjectDocumentation,
];

pub const COLORS: &[&str] = &["default", "red", "yellow", "green", "blue", "purple", "fuchsia", "pink", "magenta"];

/// The palette as a schema (the API stores and returns the names of [`COLORS`]).
#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Color {
    Default,
    Red,
    Yellow,
    Green,
    Blue,
    Purple,
    Fuchsia,
    Pink,
    Magenta,
}

/// Longest accepted tag name, in characters (the spec gives none; documented in docs/tags.md).
pub const MAX_NAME_CHARS: usize = 100;

impl TagType {
    pub fn as_str(self) -> &'static str {
        match self {
            TagType::Task => "task",
            TagType::Project => "project",
            TagType::ProjectComponent => "project-component",
            TagType::Organization => "organization",
            TagType::Object => "object",
            TagType::FormTemplate => "form-template",
            TagType::ProjectDocumentation => "project-documentation",
        }
    }

    /// Parses the path segment, or answers the 400 the spec asks for.
    pub fn parse(segment: &str) -> Result<Self, ApiError> {
        TAG_TYPES.iter().copied().find(|t| t.as_str() == segment).ok_or_else(|| {
            let names: Vec<_> = TAG_TYPES.iter().map(|t| t.as_str()).collect();
            ApiError::field("type", format!("type must be one of: {}", names.join(", ")))
        })
    }

    /// Who may create (and recolour or delete) tags of this type (spec §4.6). Types for which
    /// the spec names no permission are open to employees, like project tags.
    pub const fn write_requirement(self) -> Requirement {
        match self {
            TagType::Task => Requirement::Permission(key::TASKS_CREATE_TAGS),
            TagType::ProjectComponent => {
                Requirement::AnyOf(&[key::PROJECT_COMPONENTS_LIBRARY_EDIT, key::PROJECTS_MANAGE_COMPONENTS])
            }
            TagType::ProjectDocumentation => Requirement::Permission(key::PROJECTS_MANAGE_DOCUMENTATION),
            TagType::Project | TagType::Organization | TagType::Object | TagType::FormTemplate => Requirement::Employee,
        }
    }
}

/// The case-insensitive identity of a name: Unicode lowercase of the trimmed name, with inner
/// whitespace runs collapsed so "Very  urgent" and "very urgent" are one tag.
pub fn fold_name(name: &str) -> String {
    name.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spec_type_parses_and_round_trips() {
        for t in TAG_TYPES {
            assert_eq!(TagType::parse(t.as_str()).unwrap(), *t);
        }
        for bad in ["", "Task", "tasks", "project_component", "task "] {
            let err = TagType::parse(bad).unwrap_err();
            assert_eq!(err.status.as_u16(), 400);
            assert!(err.errors.unwrap()["type"][0].contains("project-documentation"));
        }
    }

    #[test]
    fn names_fold_case_insensitively() {
        assert_eq!(fold_name("  Urgent "), "urgent");
        assert_eq!(fold_name("ÄRGER"), fold_name("ärger"));
        assert_eq!(fold_name("Very \t Urgent"), "very urgent");
        assert_ne!(fold_name("urgent"), fold_name("urgent!"));
    }
}
