//! The bearer-token format: random tokens with a kind prefix: personal access tokens (`lt_pat_`), OAuth access
//! tokens (`lt_oat_`) and OAuth refresh tokens (`lt_ort_`). Each is the prefix + 48 base64url
//! characters + 6 checksum characters.
//!
//! The 48 characters encode 24 random bytes followed by a 12-byte HMAC-SHA256 tag over the
//! prefix and them, keyed by the deployment's token key: a forged token fails the tag and is
//! rejected without reading the store, and a token of one kind cannot pass as another (the
//! prefix is under the tag). The trailing checksum (first 4 bytes of SHA-256 over everything
//! before it, unkeyed) lets secret scanners recognise a real token offline. Only the SHA-256 of
//! the whole token is stored.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::{Digest, Sha256};

/// The kinds of token this module mints; the prefix names the kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A personal access token (`lt_pat_`).
    Personal,
    /// An OAuth 2.0 access token (`lt_oat_`).
    OAuthAccess,
    /// An OAuth 2.0 refresh token (`lt_ort_`).
    OAuthRefresh,
}

impl Kind {
    pub const ALL: [Kind; 3] = [Kind::Personal, Kind::OAuthAccess, Kind::OAuthRefresh];

    /// The prefix; every prefix has [`PREFIX_LEN`] characters.
    pub const fn prefix(self) -> &'static str {
        match self {
            Kind::Personal => PREFIX,
            Kind::OAuthAccess => OAUTH_ACCESS_PREFIX,
            Kind::OAuthRefresh => OAUTH_REFRESH_PREFIX,
        }
    }

    /// The kind a token's prefix names, if any.
    pub fn of(token: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| token.starts_with(k.prefix()))
    }
}

/// Prefix of personal access tokens.
pub const PREFIX: &str = "lt_pat_";
/// Prefix of OAuth access tokens.
pub const OAUTH_ACCESS_PREFIX: &str = "lt_oat_";
/// Prefix of OAuth refresh tokens.
pub const OAUTH_REFRESH_PREFIX: &str = "lt_ort_";
const PREFIX_LEN: usize = 7;
const RANDOM_LEN: usize = 24;
const TAG_LEN: usize = 12;
const BODY_CHARS: usize = (RANDOM_LEN + TAG_LEN) * 4 / 3; // 48
const CHECKSUM_CHARS: usize = 6; // 4 bytes, base64url
/// The length of every token of this module, whatever its kind.
pub const TOKEN_LEN: usize = PREFIX_LEN + BODY_CHARS + CHECKSUM_CHARS;

/// The secret that keys token tags. 32 random bytes per deployment.
#[derive(Clone)]
pub struct TokenKey([u8; 32]);

impl TokenKey {
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        TokenKey(bytes)
    }

    pub fn generate() -> Self {
        let mut bytes = [0u8; 32];
        rand::rng().fill_bytes(&mut bytes);
        TokenKey(bytes)
    }

    /// Parses the stored form: 64 hex characters.
    pub fn from_hex(text: &str) -> Option<Self> {
        let text = text.trim();
        if text.len() != 64 {
            return None;
        }
        let mut bytes = [0u8; 32];
        for (i, byte) in bytes.iter_mut().enumerate() {
            *byte = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
        }
        Some(TokenKey(bytes))
    }

    pub fn to_hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// A key for another purpose (signed local file URLs…), derived from this one as
    /// HMAC-SHA256(key, "workapi-derive:" + purpose): never equal to a token tag's key, and
    /// rotated with it.
    pub fn derive(&self, purpose: &str) -> [u8; 32] {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC takes any key length");
        mac.update(b"workapi-derive:");
        mac.update(purpose.as_bytes());
        mac.finalize().into_bytes().into()
    }

    fn tag(&self, kind: Kind, random: &[u8]) -> [u8; TAG_LEN] {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC takes any key length");
        mac.update(kind.prefix().as_bytes());
        mac.update(random);
        let full = mac.finalize().into_bytes();
        let mut tag = [0u8; TAG_LEN];
        tag.copy_from_slice(&full[..TAG_LEN]);
        tag
    }
}

impl std::fmt::Debug for TokenKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenKey(<redacted>)")
    }
}

fn checksum(head: &str) -> String {
    URL_SAFE_NO_PAD.encode(&Sha256::digest(head.as_bytes())[..4])
}

/// Mints a new raw personal access token. Show it once; store only [`token_hash`].
pub fn mint(key: &TokenKey) -> String {
    mint_kind(key, Kind::Personal)
}

/// Mints a new raw token of the given kind. Show it once; store only [`token_hash`].
pub fn mint_kind(key: &TokenKey, kind: Kind) -> String {
    let mut random = [0u8; RANDOM_LEN];
    rand::rng().fill_bytes(&mut random);
    let mut body = random.to_vec();
    body.extend_from_slice(&key.tag(kind, &random));
    let head = format!("{}{}", kind.prefix(), URL_SAFE_NO_PAD.encode(&body));
    let sum = checksum(&head);
    head + &sum
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejection {
    /// Not shaped like a token of this kind at all.
    Malformed,
    /// Shaped right, but the checksum or the keyed tag is wrong: forged or corrupted.
    Forged,
}

/// Checks a presented personal access token without any I/O.
pub fn verify(key: &TokenKey, token: &str) -> Result<(), Rejection> {
    verify_kind(key, Kind::Personal, token)
}

/// Checks a presented token of the given kind without any I/O.
pub fn verify_kind(key: &TokenKey, kind: Kind, token: &str) -> Result<(), Rejection> {
    if token.len() != TOKEN_LEN || !token.starts_with(kind.prefix()) || !token.is_ascii() {
        return Err(Rejection::Malformed);
    }
    let (head, sum) = token.split_at(TOKEN_LEN - CHECKSUM_CHARS);
    let body = URL_SAFE_NO_PAD.decode(&head[PREFIX_LEN..]).map_err(|_| Rejection::Malformed)?;
    if body.len() != RANDOM_LEN + TAG_LEN {
        return Err(Rejection::Malformed);
    }
    if checksum(head) != sum {
        return Err(Rejection::Forged);
    }
    let (random, tag) = body.split_at(RANDOM_LEN);
    let expected = key.tag(kind, random);
    if subtle::ConstantTimeEq::ct_eq(&expected[..], tag).into() { Ok(()) } else { Err(Rejection::Forged) }
}

/// The stored form of any bearer credential: lowercase hex SHA-256.
pub fn token_hash(token: &str) -> String {
    Sha256::digest(token.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minted_tokens_verify_and_have_the_documented_shape() {
        let key = TokenKey::generate();
        let token = mint(&key);
        assert_eq!(token.len(), TOKEN_LEN);
        assert!(token.starts_with("lt_pat_"));
        assert_eq!(verify(&key, &token), Ok(()));
        assert_ne!(mint(&key), token, "tokens are random");
    }

    #[test]
    fn a_token_from_another_key_is_forged() {
        let token = mint(&TokenKey::generate());
        assert_eq!(verify(&TokenKey::generate(), &token), Err(Rejection::Forged));
    }

    #[test]
    fn any_changed_character_is_rejected() {
        let key = TokenKey::generate();
        let token = mint(&key);
        for i in PREFIX.len()..token.len() {
            let mut bytes = token.clone().into_bytes();
            bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
            let changed = String::from_utf8(bytes).unwrap();
            assert!(verify(&key, &changed).is_err(), "position {i} accepted");
        }
    }

    #[test]
    fn every_kind_verifies_only_as_itself() {
        let key = TokenKey::generate();
        for kind in Kind::ALL {
            assert_eq!(kind.prefix().len(), PREFIX_LEN);
            let token = mint_kind(&key, kind);
            assert_eq!(token.len(), TOKEN_LEN);
            assert_eq!(Kind::of(&token), Some(kind));
            assert_eq!(verify_kind(&key, kind, &token), Ok(()));
            for other in Kind::ALL.into_iter().filter(|k| *k != kind) {
                assert_eq!(verify_kind(&key, other, &token), Err(Rejection::Malformed));
                // The same body under another prefix (checksum recomputed) fails the tag.
                let head = format!("{}{}", other.prefix(), &token[PREFIX_LEN..TOKEN_LEN - CHECKSUM_CHARS]);
                let relabelled = format!("{head}{}", checksum(&head));
                assert_eq!(verify_kind(&key, other, &relabelled), Err(Rejection::Forged));
            }
        }
    }

    #[test]
    fn a_forger_who_recomputes_the_checksum_still_fails_the_tag() {
        let key = TokenKey::generate();
        let token = mint(&key);
        let mut body = URL_SAFE_NO_PAD.decode(&token[PREFIX.len()..TOKEN_LEN - CHECKSUM_CHARS]).unwrap();
        body[0] ^= 1;
        let head = format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(&body));
        let forged = format!("{head}{}", checksum(&head));
        assert_eq!(verify(&key, &forged), Err(Rejection::Forged));
    }

    #[test]
    fn malformed_inputs() {
        let key = TokenKey::generate();
        for bad in ["", "lt_pat_", "Bearer x", &"lt_pat_".repeat(9), &format!("{}é", &mint(&key)[..TOKEN_LEN - 2])] {
            assert_eq!(verify(&key, bad), Err(Rejection::Malformed), "{bad:?}");
        }
    }

    #[test]
    fn key_hex_round_trips_and_debug_hides_it() {
        let key = TokenKey::generate();
        let hex = key.to_hex();
        assert_eq!(TokenKey::from_hex(&hex).unwrap().to_hex(), hex);
        assert!(TokenKey::from_hex("zz").is_none());
        assert!(!format!("{key:?}").contains(&hex));
    }
}
