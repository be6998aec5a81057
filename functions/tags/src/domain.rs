//! Tag rules (spec §2.5, §4.6) as plain functions.

use workapi_domain::permissions::{Requirement, key};

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

/// The palette (the API stores and returns these names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
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
workapi_wire::closed_enum!(Color);

/// Longest accepted tag name, in characters (the spec gives none; documented in docs/tags.md).
pub const MAX_NAME_CHARS: usize = 100;

/// Read by its path name; an unknown name is a 400 naming the `type` parameter and listing
/// the types.
impl<'de> serde::Deserialize<'de> for TagType {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let expected =
            "one of: task, project, project-component, organization, object, form-template, project-documentation";
        workapi_kit::request::deserialize_str(deserializer, expected, |name| {
            TAG_TYPES.iter().copied().find(|t| t.as_str() == name)
        })
    }
}

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
/// whitespace runs collapsed so "Very  urgent" and "very urgent" are one tag, in Unicode NFC so
/// that a precomposed "é" and "e" + combining acute (what some keyboards and macOS file names
/// produce) are one tag too.
pub fn fold_name(name: &str) -> String {
    let lowered = name.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
    icu_normalizer::ComposingNormalizerBorrowed::new_nfc().normalize(&lowered).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fold_case_whitespace_and_canonical_equivalence() {
        for (a, b) in [
            ("Urgent", "urgent"),
            ("Very  urgent ", "very urgent"),
            ("Caf\u{e9}", "cafe\u{301}"),
            ("CAFE\u{301}", "caf\u{e9}"),
            ("\u{212B}ngstr\u{f6}m", "\u{c5}ngstro\u{308}m"),
        ] {
            assert_eq!(fold_name(a), fold_name(b), "{a:?} vs {b:?}");
        }
        assert_ne!(fold_name("cafe"), fold_name("caf\u{e9}"));
    }

    #[test]
    fn every_spec_type_reads_by_its_path_name() {
        for t in TAG_TYPES {
            let read: TagType = serde_json::from_value(serde_json::json!(t.as_str())).unwrap();
            assert_eq!(read, *t);
        }
        for bad in ["", "Task", "tasks", "project_component", "task "] {
            assert!(serde_json::from_value::<TagType>(serde_json::json!(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_expected_list_names_every_type() {
        let err = serde_json::from_value::<TagType>(serde_json::json!("nope")).unwrap_err().to_string();
        for t in TAG_TYPES {
            assert!(err.contains(t.as_str()), "{err}");
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
