//! PKCE (RFC 7636), S256 only: the authorization request carries
//! `code_challenge = BASE64URL(SHA-256(code_verifier))`, the token request the verifier.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The one supported `code_challenge_method`.
pub const METHOD_S256: &str = "S256";
/// An S256 challenge is the unpadded base64url of 32 bytes: 43 characters.
pub const CHALLENGE_CHARS: usize = 43;
/// Bounds of a verifier (RFC 7636 §4.1).
pub const MIN_VERIFIER_CHARS: usize = 43;
pub const MAX_VERIFIER_CHARS: usize = 128;

/// True for a well-formed S256 challenge: 43 base64url characters that decode to 32 bytes
/// (so non-canonical trailing bits are refused too).
pub fn is_valid_challenge(challenge: &str) -> bool {
    challenge.len() == CHALLENGE_CHARS
        && URL_SAFE_NO_PAD.decode(challenge.as_bytes()).is_ok_and(|bytes| bytes.len() == 32)
}

/// True for a well-formed verifier: 43 to 128 characters of `[A-Z a-z 0-9 - . _ ~]`.
pub fn is_valid_verifier(verifier: &str) -> bool {
    (MIN_VERIFIER_CHARS..=MAX_VERIFIER_CHARS).contains(&verifier.len())
        && verifier.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

/// The S256 challenge of a verifier.
pub fn s256(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// True when the verifier is well-formed and its S256 challenge equals `challenge`
/// (constant-time comparison).
pub fn verifier_matches(verifier: &str, challenge: &str) -> bool {
    if !is_valid_verifier(verifier) {
        return false;
    }
    let computed = s256(verifier);
    computed.len() == challenge.len() && bool::from(computed.as_bytes().ct_eq(challenge.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7636_appendix_b() {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
        assert_eq!(s256(verifier), challenge);
        assert!(is_valid_challenge(challenge));
        assert!(verifier_matches(verifier, challenge));
        assert!(!verifier_matches(verifier, &s256(&"x".repeat(43))));
    }

    #[test]
    fn verifier_bounds_and_charset() {
        assert!(is_valid_verifier(&"a".repeat(43)));
        assert!(is_valid_verifier(&"~".repeat(128)));
        assert!(!is_valid_verifier(&"a".repeat(42)));
        assert!(!is_valid_verifier(&"a".repeat(129)));
        assert!(!is_valid_verifier(&format!("{}+", "a".repeat(42))));
        assert!(!is_valid_verifier(&format!("{}é", "a".repeat(41))));
        // A 42-character verifier never matches, even against its own challenge.
        let short = "b".repeat(42);
        assert!(!verifier_matches(&short, &s256(&short)));
    }

    #[test]
    fn challenge_shape() {
        assert!(!is_valid_challenge(&"a".repeat(42)));
        assert!(!is_valid_challenge(&"a".repeat(44)));
        assert!(!is_valid_challenge(&format!("{}=", "a".repeat(42))));
        assert!(!is_valid_challenge(&format!("{}+", "a".repeat(42))));
        // 43 characters whose last one carries non-zero padding bits (B is never the last
        // character of the encoding of 32 bytes): not an encoding of 32 bytes.
        assert!(!is_valid_challenge(&format!("{}B", &s256(&"x".repeat(43))[..42])));
    }
}
