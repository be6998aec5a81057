//! The compact default of a response type: declared with the type (a domain record or an
//! answer), read by the kit's projection (`Projected`) and written into the document.

/// A response type of [P] endpoints declares its compact default once, here; handlers project
/// with it and the document reads it from the response schema ([`Projected`]).
pub trait Compact {
    /// The top-level fields a compact response keeps.
    const COMPACT: &'static [&'static str];
}

/// The schema extension that carries a compact default from a response type to the document.
pub const COMPACT_EXTENSION: &str = "x-lt-compact";
