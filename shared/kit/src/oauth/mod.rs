//! What every function needs of OAuth (DESIGN §3, docs/oauth.md): the issuer and site URL
//! (every 401 names the protected-resource metadata), and the verification of OAuth access
//! tokens. The authorization server itself (clients, codes, grants, token issuing, refresh and
//! revocation) is the oauth function (`functions/oauth`).

pub mod access;
pub mod issuer;

/// Test-only relaxation of the fetch of client metadata documents (docs/oauth.md, "Client ID
/// Metadata Documents"). The default admits nothing beyond the rules: public addresses only,
/// certificates from the system's roots. Only code can set another value, through
/// `AppStateBuilder::metadata_fetch_for_tests`, which the test harness alone calls:
/// no environment variable, setting or request can enable it.
#[derive(Clone, Default)]
pub struct MetadataFetchForTests {
    /// Admit loopback addresses (the tests' local https server).
    pub allow_loopback: bool,
    /// Extra trusted root certificates (DER), e.g. the tests' self-signed one.
    pub extra_roots_der: Vec<Vec<u8>>,
}

impl MetadataFetchForTests {
    /// True when anything beyond the rules is admitted.
    pub fn is_relaxed(&self) -> bool {
        self.allow_loopback || !self.extra_roots_der.is_empty()
    }
}
