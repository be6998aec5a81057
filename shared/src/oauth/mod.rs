//! What every function needs of OAuth (DESIGN §3, docs/oauth.md): the issuer and site URL
//! (every 401 names the protected-resource metadata), and the verification of OAuth access
//! tokens. The authorization server itself (clients, codes, grants, token issuing, refresh and
//! revocation) is the oauth function (`functions/oauth`).

pub mod access;
pub mod issuer;
