//! The cryptography of session JWTs: HS256 only (docs/auth.md), through the `hmac` and `sha2`
//! crates the token module uses already, installed as `jsonwebtoken`'s crypto provider. Its
//! built-in providers would link aws-lc or the RSA and elliptic-curve crates into every
//! bootstrap for algorithms that are never accepted.

use hmac::{Hmac, Mac};
use jsonwebtoken::crypto::{CryptoProvider, JwtSigner, JwtVerifier, KeyUtils};
use jsonwebtoken::errors::{ErrorKind, Result};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey};
use sha2::Sha256;
use std::sync::Once;

type HmacSha256 = Hmac<Sha256>;

struct Hs256(HmacSha256);

impl Hs256 {
    fn new(secret: &[u8]) -> Result<Self> {
        HmacSha256::new_from_slice(secret).map(Hs256).map_err(|_| ErrorKind::InvalidKeyFormat.into())
    }
}

impl signature::Signer<Vec<u8>> for Hs256 {
    fn try_sign(&self, message: &[u8]) -> std::result::Result<Vec<u8>, signature::Error> {
        let mut mac = self.0.clone();
        mac.update(message);
        Ok(mac.finalize().into_bytes().to_vec())
    }
}

impl signature::Verifier<Vec<u8>> for Hs256 {
    /// Constant-time comparison (`Mac::verify_slice`).
    fn verify(&self, message: &[u8], signature: &Vec<u8>) -> std::result::Result<(), signature::Error> {
        let mut mac = self.0.clone();
        mac.update(message);
        mac.verify_slice(signature).map_err(|_| signature::Error::new())
    }
}

impl JwtSigner for Hs256 {
    fn algorithm(&self) -> Algorithm {
        Algorithm::HS256
    }
}

impl JwtVerifier for Hs256 {
    fn algorithm(&self) -> Algorithm {
        Algorithm::HS256
    }
}

static PROVIDER: CryptoProvider = CryptoProvider {
    signer_factory: |algorithm, key: &EncodingKey| match algorithm {
        Algorithm::HS256 => Ok(Box::new(Hs256::new(key.as_bytes())?)),
        _ => Err(ErrorKind::InvalidAlgorithm.into()),
    },
    verifier_factory: |algorithm, key: &DecodingKey| match algorithm {
        Algorithm::HS256 => Ok(Box::new(Hs256::new(key.try_get_as_bytes()?)?)),
        _ => Err(ErrorKind::InvalidAlgorithm.into()),
    },
    // JWKs are never read (keys come from the session key set).
    key_utils: KeyUtils::new_unimplemented(),
};

/// Installs the provider for this process, once; every JWT operation calls it first.
pub fn install() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        // Only this module installs one, so an existing provider is this one.
        let _ = PROVIDER.install_default();
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use signature::{Signer, Verifier};

    /// RFC 4231 test case 2: HMAC-SHA-256 with key "Jefe".
    #[test]
    fn signs_as_rfc_4231_and_verifies_in_constant_time() {
        let mac = Hs256::new(b"Jefe").unwrap();
        let tag = mac.try_sign(b"what do ya want for nothing?").unwrap();
        let hex: String = tag.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
        assert!(mac.verify(b"what do ya want for nothing?", &tag).is_ok());
        assert!(mac.verify(b"what do ya want for nothing!", &tag).is_err());
        assert!(mac.verify(b"what do ya want for nothing?", &tag[..31].to_vec()).is_err());
    }

    #[test]
    fn other_algorithms_are_refused() {
        install();
        let key = EncodingKey::from_secret(b"k");
        let header = jsonwebtoken::Header::new(Algorithm::HS512);
        assert!(jsonwebtoken::encode(&header, &serde_json::json!({"a": 1}), &key).is_err());
    }
}
