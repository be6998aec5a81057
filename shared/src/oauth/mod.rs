//! The OAuth 2.0 authorization server's domain (DESIGN §3, docs/oauth.md): registered clients,
//! the issuer and site URL, and (with the authorize and token endpoints) codes, grants and
//! tokens. The HTTP handlers live in `functions/oauth`.

pub mod client;
pub mod code;
pub mod form;
pub mod grant;
pub mod install;
pub mod issuer;
pub mod pkce;
pub mod scope;
