//! Webhook delivery rules (docs/events.md#delivery): the Standard Webhooks 1.0 signature, the
//! retry schedule, and what an attempt's outcome means for the delivery and its endpoint. Plain
//! functions; the dispatcher (functions/events) does the I/O.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The waits after each failed attempt: attempt 1 at once, then these (about 28 hours in all),
/// so 8 attempts; a delivery whose 8th attempt fails has failed.
pub const RETRY_SCHEDULE_SECS: [i64; 7] = [5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 10 * 3600];
/// Attempts a delivery gets by itself (a redelivery asked for adds one each).
pub const MAX_ATTEMPTS: u32 = RETRY_SCHEDULE_SECS.len() as u32 + 1;
/// An attempt that has no 2xx answer within this has failed.
pub const ATTEMPT_TIMEOUT_SECS: u64 = 15;
/// An endpoint whose deliveries have failed, without one success, for this long is disabled.
pub const DISABLE_AFTER_FAILING_SECS: i64 = 5 * 24 * 3600;
/// How long a delivery and its attempts are listed (as the events themselves).
pub const DELIVERY_RETENTION_SECS: i64 = crate::event::RETENTION_SECS;

/// The prefix of a Standard Webhooks secret; the rest is the base64 of the key.
pub const SECRET_PREFIX: &str = "whsec_";

/// How an attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The receiver answered this status within the timeout.
    Answered(u16),
    /// No answer: connection refused, TLS failure, timeout, an address refused.
    NoAnswer,
}

/// What follows an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Delivered.
    Delivered,
    /// Try again after this many seconds.
    RetryAfter(i64),
    /// No more attempts: the schedule is spent.
    GiveUp,
    /// The receiver said the endpoint is gone (410): disable it, no more attempts.
    DisableEndpoint,
}

/// What follows attempt number `attempt` (1-based, counting every attempt of the delivery) that
/// ended with `outcome`. A redelivery asked for by a user is one attempt more and is not
/// retried by itself when the schedule is spent.
pub fn next(attempt: u32, outcome: Outcome) -> Next {
    match outcome {
        Outcome::Answered(status) if (200..300).contains(&status) => Next::Delivered,
        Outcome::Answered(410) => Next::DisableEndpoint,
        _ => match RETRY_SCHEDULE_SECS.get(attempt.saturating_sub(1) as usize) {
            Some(wait) => Next::RetryAfter(*wait),
            None => Next::GiveUp,
        },
    }
}

/// Whether an endpoint failing since `failing_since` (epoch seconds, the first failure after its
/// last success) is to be disabled at `now`.
pub fn failing_too_long(failing_since: i64, now: i64) -> bool {
    now - failing_since >= DISABLE_AFTER_FAILING_SECS
}

/// A secret that is not a Standard Webhooks secret (`whsec_` and base64).
#[derive(Debug, PartialEq, Eq)]
pub struct MalformedSecret;

/// The signature of one secret: `v1,` and the base64 of HMAC-SHA256(key, `id.timestamp.body`).
pub fn sign(secret: &str, message_id: &str, timestamp: i64, body: &[u8]) -> Result<String, MalformedSecret> {
    let key =
        STANDARD.decode(secret.strip_prefix(SECRET_PREFIX).ok_or(MalformedSecret)?).map_err(|_| MalformedSecret)?;
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).map_err(|_| MalformedSecret)?;
    mac.update(message_id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    Ok(format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes())))
}

/// The `webhook-signature` header: one signature per secret, separated by spaces (during a
/// rotation's overlap, both secrets sign).
pub fn signature_header<'a>(
    secrets: impl IntoIterator<Item = &'a str>,
    message_id: &str,
    timestamp: i64,
    body: &[u8],
) -> Result<String, MalformedSecret> {
    let signatures =
        secrets.into_iter().map(|s| sign(s, message_id, timestamp, body)).collect::<Result<Vec<_>, _>>()?;
    Ok(signatures.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The test vector of the Standard Webhooks reference libraries (`test_sign_function` of
    /// the `standardwebhooks` package).
    #[test]
    fn signs_as_the_specification_s_test_vector() {
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let signed = sign(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, br#"{"test": 2432232314}"#);
        assert_eq!(signed.unwrap(), "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }

    #[test]
    fn two_secrets_sign_side_by_side() {
        let (a, b) = (
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwMfKQ9r8GKYo=",
            "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
        );
        let header = signature_header([a, b], "evt_1", 1, b"{}").unwrap();
        let parts: Vec<&str> = header.split(' ').collect();
        assert_eq!(parts, [sign(a, "evt_1", 1, b"{}").unwrap(), sign(b, "evt_1", 1, b"{}").unwrap()]);
        assert_ne!(parts[0], parts[1]);
    }

    #[test]
    fn a_secret_that_is_not_one_is_refused() {
        assert_eq!(sign("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwMfKQ9r8GKYo=", "m", 1, b""), Err(MalformedSecret));
        assert_eq!(sign("whsec_%%%", "m", 1, b""), Err(MalformedSecret));
    }

    #[test]
    fn the_schedule_table() {
        use Next::*;
        use Outcome::*;
        let table = [
            (1, Answered(200), Delivered),
            (1, Answered(204), Delivered),
            (3, Answered(299), Delivered),
            (1, Answered(410), DisableEndpoint),
            (8, Answered(410), DisableEndpoint),
            (1, Answered(500), RetryAfter(5)),
            (1, NoAnswer, RetryAfter(5)),
            (2, Answered(404), RetryAfter(300)),
            (3, Answered(301), RetryAfter(1800)),
            (4, NoAnswer, RetryAfter(7200)),
            (5, NoAnswer, RetryAfter(18000)),
            (6, NoAnswer, RetryAfter(36000)),
            (7, NoAnswer, RetryAfter(36000)),
            (8, NoAnswer, GiveUp),
            (9, Answered(500), GiveUp),
        ];
        for (attempt, outcome, expected) in table {
            assert_eq!(next(attempt, outcome), expected, "attempt {attempt} {outcome:?}");
        }
        assert_eq!(MAX_ATTEMPTS, 8);
        assert_eq!(RETRY_SCHEDULE_SECS.iter().sum::<i64>(), 27 * 3600 + 35 * 60 + 5);
    }

    #[test]
    fn an_endpoint_is_disabled_after_five_days_of_failures() {
        let day = 24 * 3600;
        assert!(!failing_too_long(0, 5 * day - 1));
        assert!(failing_too_long(0, 5 * day));
    }
}
