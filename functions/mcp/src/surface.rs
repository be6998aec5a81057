//! The surface a request sees (docs/mcp.md, "Surfaces"): which tools `tools/list` shows and
//! which operations may run. By default a few operations an assistant uses most, plus the two
//! tools that reach every operation (`searchOperations`, `callOperation`); toolsets (the tag
//! groups) chosen by URL (`/mcp/x/{toolset}`) or header (`X-MCP-Toolsets`) list their tools in
//! full; read-only (`/mcp/readonly`, `/mcp/x/{toolset}/readonly`, `X-MCP-Readonly: true`)
//! lists and runs reads only.

use crate::tools::{self, Tool};
use axum::http::HeaderMap;
use std::collections::BTreeSet;
use workapi_kit::error::ApiError;

/// The default surface's operations: what needs my attention (notifications, and marking one
/// read), which projects, tasks and contacts there are, one project or task in detail, and the
/// tags work is filed under. docs/mcp.md says why these, and what they cost in bytes. In
/// document order, the order `tools/list` shows them in.
pub const DEFAULT_OPERATIONS: &[&str] = &[
    "listNotifications",
    "countUnreadNotifications",
    "markNotificationRead",
    "listContacts",
    "listProjects",
    "getProject",
    "listProjectTasks",
    "listTags",
    "getTask",
];
/// The pseudo-toolsets: the default surface's operations, and every toolset.
pub const DEFAULT: &str = "default";
pub const ALL: &str = "all";
pub const TOOLSETS_HEADER: &str = "x-mcp-toolsets";
pub const READONLY_HEADER: &str = "x-mcp-readonly";
/// The URL segments: `/mcp/x/{toolsets}` and a final `/readonly`.
const TOOLSETS_SEGMENT: &str = "x";
const READONLY_SEGMENT: &str = "readonly";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Surface {
    /// Whether the default operations are listed.
    pub default: bool,
    /// The toolsets listed in full.
    pub toolsets: BTreeSet<String>,
    /// Reads only: writes are neither listed nor run.
    pub read_only: bool,
}

impl Default for Surface {
    fn default() -> Self {
        Surface { default: true, toolsets: BTreeSet::new(), read_only: false }
    }
}

impl Surface {
    /// The surface of a request to `/mcp{rest}` (`rest` empty or starting with `/`): the URL's
    /// toolsets and the header's together, read-only when either says so. An unknown URL is a
    /// 404, an unknown toolset in the URL a 404 and in the header a 400, each naming the toolsets.
    pub fn of(rest: &str, headers: &HeaderMap) -> Result<Surface, ApiError> {
        let segments: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
        let (url_toolsets, url_read_only) = match segments.as_slice() {
            [] => (None, false),
            [READONLY_SEGMENT] => (None, true),
            [TOOLSETS_SEGMENT, toolsets] => (Some(*toolsets), false),
            [TOOLSETS_SEGMENT, toolsets, READONLY_SEGMENT] => (Some(*toolsets), true),
            _ => {
                return Err(ApiError::not_found(format!(
                    "No MCP endpoint at /mcp{rest}: use /mcp, /mcp/readonly, /mcp/x/{{toolset}} or /mcp/x/{{toolset}}/readonly"
                )));
            }
        };
        let mut selected = BTreeSet::new();
        if let Some(list) = url_toolsets {
            selected.extend(parse_toolsets(list).map_err(|unknown| ApiError::not_found(unknown_message(&unknown)))?);
        }
        if let Some(value) = headers.get(TOOLSETS_HEADER) {
            let list = value.to_str().map_err(|_| ApiError::field("X-MCP-Toolsets", "must be text"))?;
            selected.extend(
                parse_toolsets(list).map_err(|unknown| ApiError::field("X-MCP-Toolsets", unknown_message(&unknown)))?,
            );
        }
        let header_read_only = match headers.get(READONLY_HEADER).map(|v| v.to_str().map(str::trim)) {
            None => false,
            Some(Ok(value)) if value.eq_ignore_ascii_case("true") || value == "1" => true,
            Some(Ok(value)) if value.eq_ignore_ascii_case("false") || value == "0" => false,
            Some(_) => return Err(ApiError::field("X-MCP-Readonly", "must be true or false")),
        };
        let read_only = url_read_only || header_read_only;
        if selected.is_empty() {
            return Ok(Surface { read_only, ..Surface::default() });
        }
        let default = selected.remove(DEFAULT);
        if selected.remove(ALL) {
            selected = tools::toolsets().iter().cloned().collect();
        }
        Ok(Surface { default, toolsets: selected, read_only })
    }

    /// Whether `tools/list` shows the operation's own tool.
    pub fn lists(&self, tool: &Tool) -> bool {
        self.allows(tool)
            && ((self.default && DEFAULT_OPERATIONS.contains(&tool.name.as_str()))
                || self.toolsets.contains(&tool.toolset))
    }

    /// Whether the operation may run here, listed or not (through its own name or
    /// `callOperation`): a read-only surface runs reads only.
    pub fn allows(&self, tool: &Tool) -> bool {
        !self.read_only || tool.reads
    }
}

/// Comma-separated toolset names (blanks ignored, any case); Err with the first unknown one.
fn parse_toolsets(list: &str) -> Result<Vec<String>, String> {
    let mut names = Vec::new();
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let name = name.to_ascii_lowercase();
        if name != DEFAULT && name != ALL && !tools::toolsets().contains(&name) {
            return Err(name);
        }
        names.push(name);
    }
    Ok(names)
}

fn unknown_message(unknown: &str) -> String {
    format!("Unknown toolset {unknown}; toolsets: {}, {DEFAULT}, {ALL}", tools::toolsets().join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        pairs.iter().map(|(n, v)| (axum::http::HeaderName::from_static(n), HeaderValue::from_static(v))).collect()
    }

    fn toolsets(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|n| (*n).to_owned()).collect()
    }

    #[test]
    fn urls_and_headers_choose_the_surface() {
        let none = HeaderMap::new();
        assert_eq!(Surface::of("", &none).unwrap(), Surface::default());
        let read_only = Surface::of("/readonly", &none).unwrap();
        assert!(read_only.read_only && read_only.default && read_only.toolsets.is_empty());
        let tags = Surface::of("/x/tags", &none).unwrap();
        assert_eq!(tags, Surface { default: false, toolsets: toolsets(&["tags"]), read_only: false });
        let both = Surface::of("/x/Tags,billing/readonly", &none).unwrap();
        assert_eq!(both, Surface { default: false, toolsets: toolsets(&["billing", "tags"]), read_only: true });
        let by_header =
            Surface::of("", &headers(&[("x-mcp-toolsets", "tags, billing,"), ("x-mcp-readonly", "TRUE")])).unwrap();
        assert_eq!(by_header, both);
        let with_default = Surface::of("/x/default,tags", &headers(&[("x-mcp-toolsets", "billing")])).unwrap();
        assert_eq!(with_default, Surface { default: true, toolsets: toolsets(&["billing", "tags"]), read_only: false });
        let all = Surface::of("/x/all", &none).unwrap();
        assert_eq!(all.toolsets.len(), tools::toolsets().len());
        assert!(!Surface::of("", &headers(&[("x-mcp-readonly", "false")])).unwrap().read_only);
    }

    #[test]
    fn unknown_urls_toolsets_and_values_are_refused_naming_what_exists() {
        let none = HeaderMap::new();
        for rest in ["/x", "/x/tags/other", "/readonly/x/tags", "/nope"] {
            assert_eq!(Surface::of(rest, &none).unwrap_err().status, 404, "{rest}");
        }
        let unknown = Surface::of("/x/nosuch", &none).unwrap_err();
        assert_eq!(unknown.status, 404);
        assert!(unknown.message.contains("Unknown toolset nosuch; toolsets: "), "{}", unknown.message);
        assert!(unknown.message.contains("tags"), "{}", unknown.message);
        let header = Surface::of("", &headers(&[("x-mcp-toolsets", "tags,nosuch")])).unwrap_err();
        assert_eq!(header.status, 400);
        assert!(header.errors.unwrap()["X-MCP-Toolsets"][0].contains("nosuch"));
        assert_eq!(Surface::of("", &headers(&[("x-mcp-readonly", "yes")])).unwrap_err().status, 400);
    }

    #[test]
    fn the_default_surface_lists_its_operations_and_read_only_only_reads() {
        let listed = |surface: &Surface| -> Vec<&str> {
            tools::all().iter().filter(|t| surface.lists(t)).map(|t| t.name.as_str()).collect()
        };
        let default = listed(&Surface::default());
        assert_eq!(default.len(), DEFAULT_OPERATIONS.len(), "every default operation exists: {default:?}");
        let read_only = Surface { read_only: true, ..Surface::default() };
        assert!(listed(&read_only).iter().all(|name| tools::find(name).unwrap().reads));
        assert!(!listed(&read_only).contains(&"markNotificationRead"));
        let create = tools::find("createTag").unwrap();
        assert!(!read_only.allows(create) && Surface::default().allows(create));
        let tags = Surface { default: false, toolsets: toolsets(&["tags"]), read_only: false };
        assert_eq!(listed(&tags), ["listTags", "createTag", "deleteTag", "saveTagColor"]);
    }
}
