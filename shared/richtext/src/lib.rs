//! Rich text: HTML and Markdown to IDoc and back (spec §1.4, DESIGN §5; docs/richtext.md).
//!
//! Input is detected (`detect`), parsed to IDoc — Markdown is first written out as HTML
//! (`markdown`) so that both formats, and HTML mixed into Markdown, go through the one HTML
//! parser (`html`) — and stored as typed IDoc (`model`). IDoc given as JSON (agent profile) is
//! validated strictly (`validate`). `render` writes the HTML returned in responses. Before each
//! parser runs, a linear scan (`scan`) refuses nesting deeper than the limits, so that no input
//! makes the parsers' depth-proportional work add up (DESIGN §5, "bounded work").
//!
//! ```
//! use workapi_richtext::{to_html, to_idoc, Profile};
//! let doc = to_idoc("**Hello** [site](https://example.com)", Profile::Editor).unwrap();
//! assert_eq!(
//!     to_html(&doc),
//!     "<p><strong>Hello</strong> <a target=\"_blank\" rel=\"noopener noreferrer nofollow\" \
//!      href=\"https://example.com\">site</a></p>"
//! );
//! ```

mod colgroup;
mod detect;
mod href;
mod html;
mod markdown;
mod model;
mod render;
mod scan;
mod schema;
mod tags;
mod text;
mod validate;

pub use detect::Format;
pub use model::{
    CellAttrs, Doc, HeadingAttrs, IconAttrs, LINK_REL, LINK_TARGET, LinkAttrs, Mark, Node, OrderedListAttrs,
};
/// Escapes text for HTML element content and quoted attribute values (also used by the
/// server-rendered OAuth pages).
pub use render::escape_attr;

/// Largest accepted input, in bytes (descriptions are a few KB; this leaves two orders of
/// magnitude and bounds the work one request can cause).
pub const MAX_INPUT_BYTES: usize = 256 * 1024;
/// Deepest accepted IDoc nesting (doc = 1; a list item inside a list inside the doc is 3). It
/// keeps stored JSON well inside serde_json's recursion limit and rendering off the stack edge.
pub const MAX_DEPTH: usize = 32;
/// Deepest HTML element nesting walked; the tree walk is recursive.
pub const MAX_HTML_DEPTH: usize = 256;

/// Which nodes a field accepts (spec §1.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Profile {
    /// Descriptions and comments: paragraph, heading, lists, hardBreak, horizontalRule,
    /// blockquote.
    Editor,
    /// Product and variant descriptions: editor plus tables, callout and emoji.
    Product,
    /// Agent instructions: editor nodes, and IDoc JSON accepted as an object or a JSON string.
    Agent,
}

/// Why a rich-text value was rejected. `Display` is a message for a 400 validation error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RichTextError {
    #[error("rich text is too long: {len} bytes, the maximum is {max}")]
    TooLarge { len: usize, max: usize },
    #[error("rich text is nested too deeply: the maximum depth is {max}")]
    TooDeep { max: usize },
    /// IDoc JSON that does not follow the schema; `path` points into the JSON.
    #[error("invalid IDoc at {path}: {message}")]
    InvalidIdoc { path: String, message: String },
    #[error("{0}")]
    WrongType(String),
}

/// Detects the format of `input`, parses it and returns the IDoc to store.
pub fn to_idoc(input: &str, profile: Profile) -> Result<Doc, RichTextError> {
    if input.len() > MAX_INPUT_BYTES {
        return Err(RichTextError::TooLarge { len: input.len(), max: MAX_INPUT_BYTES });
    }
    let content = match detect::detect(input, profile) {
        Format::IdocJson(value) => return validate::from_json(&value, profile),
        Format::Html => {
            scan::check_html(input)?;
            html::parse(input, profile)?
        }
        Format::Markdown => {
            // Each parser sees only input whose nesting the scan before it has bounded.
            scan::check_markdown(input)?;
            let html = markdown::to_html(input, profile);
            scan::check_html(&html)?;
            html::parse(&html, profile)?
        }
    };
    let doc = Doc { content };
    if validate::depth(&doc) > MAX_DEPTH {
        return Err(RichTextError::TooDeep { max: MAX_DEPTH });
    }
    debug_assert_eq!(validate::check(&doc, profile), Ok(()), "parser output must be valid");
    Ok(doc)
}

/// The same for a JSON request field: a string is parsed as [`to_idoc`] does; an object is IDoc
/// JSON, accepted only in the agent profile.
pub fn to_idoc_json(value: &serde_json::Value, profile: Profile) -> Result<Doc, RichTextError> {
    match value {
        serde_json::Value::String(s) => to_idoc(s, profile),
        serde_json::Value::Object(_) if profile == Profile::Agent => {
            // Depth first: serialising a hostile, deeply nested value to measure it would recurse.
            validate::check_json_depth(value)?;
            let len = value.to_string().len();
            if len > MAX_INPUT_BYTES {
                return Err(RichTextError::TooLarge { len, max: MAX_INPUT_BYTES });
            }
            validate::from_json(value, profile)
        }
        _ if profile == Profile::Agent => {
            Err(RichTextError::WrongType("must be a string (Markdown, HTML or IDoc JSON) or an IDoc object".into()))
        }
        _ => Err(RichTextError::WrongType("must be a string (HTML or Markdown)".into())),
    }
}

/// Validates a stored or client-supplied [`Doc`] against a profile (schema, attributes, hrefs,
/// depth), e.g. after deserialising it with serde.
pub fn validate(doc: &Doc, profile: Profile) -> Result<(), RichTextError> {
    if validate::depth(doc) > MAX_DEPTH {
        return Err(RichTextError::TooDeep { max: MAX_DEPTH });
    }
    validate::check(doc, profile).map_err(|(path, message)| RichTextError::InvalidIdoc { path, message })
}

/// Renders IDoc as the HTML returned in responses.
pub fn to_html(doc: &Doc) -> String {
    render::render(doc)
}
