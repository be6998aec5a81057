//! Connections the service makes to addresses a client names (Client ID Metadata Documents,
//! webhook endpoints): which addresses are public, and a host's addresses resolved once and
//! checked, so the caller connects to a checked address and never resolves the name again (no
//! DNS rebinding between the check and the connection).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// True for a public address, the only kind the service connects to on a client's behalf
/// (metadata documents, webhook endpoints): none of unspecified,
/// loopback, private (RFC 1918), shared (CGNAT, RFC 6598), link-local, multicast, broadcast,
/// documentation, benchmarking, reserved, unique-local (fc00::/7), site-local, discard-only,
/// NAT64 / 6to4 / Teredo (which embed IPv4) or IPv4-mapped / -compatible forms of those.
pub fn is_public_address(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public_v4(v4);
            }
            is_public_v6(v6)
        }
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(a == 0 // "this network", 0.0.0.0/8
        || a == 10
        || a == 127
        || (a == 100 && (64..128).contains(&b)) // CGNAT 100.64.0.0/10
        || (a == 169 && b == 254)
        || (a == 172 && (16..32).contains(&b))
        || (a == 192 && b == 168)
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 192 && b == 0 && c == 2) // TEST-NET-1
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || (a == 198 && b == 51 && c == 100) // TEST-NET-2
        || (a == 203 && b == 0 && c == 113) // TEST-NET-3
        || (a == 192 && b == 88 && c == 99) // 6to4 relay anycast
        || a >= 224) // multicast, reserved, broadcast
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    // Only global unicast (2000::/3) is fetched from, minus what lies inside it but is not.
    (s[0] & 0xe000) == 0x2000
        && !(s[0] == 0x2001 && s[1] == 0x0db8) // documentation
        && !(s[0] == 0x3fff && s[1] < 0x1000) // documentation (RFC 9637)
        && !(s[0] == 0x2001 && s[1] < 0x0200) // IETF protocol assignments (Teredo, benchmarking, ORCHID)
        && s[0] != 0x2002 // 6to4: embeds an IPv4 address
}

/// Why a host's addresses are not connected to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// The host has no address (or none could be resolved).
    NoSuchHost,
    /// It resolves to an address `admitted` refused.
    Address(IpAddr),
}

/// The addresses of `url`'s host on `port`, every one of them `admitted` (else the first that is
/// not): resolved here, once, for the caller to connect to.
pub async fn resolve_admitted(
    url: &url::Url,
    port: u16,
    admitted: impl Fn(IpAddr) -> bool,
) -> Result<Vec<SocketAddr>, Refused> {
    let addresses: Vec<SocketAddr> = match url.host() {
        Some(url::Host::Domain(domain)) => {
            tokio::net::lookup_host((domain, port)).await.map_err(|_| Refused::NoSuchHost)?.collect()
        }
        Some(url::Host::Ipv4(ip)) => vec![SocketAddr::new(ip.into(), port)],
        Some(url::Host::Ipv6(ip)) => vec![SocketAddr::new(ip.into(), port)],
        None => return Err(Refused::NoSuchHost),
    };
    if addresses.is_empty() {
        return Err(Refused::NoSuchHost);
    }
    match addresses.iter().find(|a| !admitted(a.ip())) {
        Some(refused) => Err(Refused::Address(refused.ip())),
        None => Ok(addresses),
    }
}

/// Where webhook endpoints may point (docs/events.md#webhook-endpoints): `https` URLs whose
/// host resolves to public addresses only, or, with `allow_private` (`LT_WEBHOOKS_ALLOW_PRIVATE=true`,
/// for local work and tests), also `http` and loopback or private addresses. The link-local
/// range (169.254.0.0/16, with the cloud metadata address 169.254.169.254; fe80::/10), the
/// metadata address fd00:ec2::254 and the unspecified addresses stay refused either way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WebhookTargets {
    pub allow_private: bool,
}

/// The longest webhook URL accepted.
pub const MAX_WEBHOOK_URL_CHARS: usize = 2000;

impl WebhookTargets {
    /// The variable that relaxes the rule.
    pub const VARIABLE: &'static str = "LT_WEBHOOKS_ALLOW_PRIVATE";

    /// The rule a value of [`Self::VARIABLE`] sets: `true` or `false` (absent: false).
    pub fn from_value(value: Option<&str>) -> Result<WebhookTargets, String> {
        match value.map(str::trim) {
            None | Some("") | Some("false") => Ok(WebhookTargets { allow_private: false }),
            Some("true") => Ok(WebhookTargets { allow_private: true }),
            Some(other) => Err(format!("{} must be true or false, not {other:?}", Self::VARIABLE)),
        }
    }

    /// The rule the environment sets; a value that is neither true nor false is logged and read
    /// as false (the strict rule).
    pub fn from_env() -> WebhookTargets {
        let value = std::env::var(Self::VARIABLE).ok();
        Self::from_value(value.as_deref()).unwrap_or_else(|e| {
            tracing::warn!("{e}; webhooks go to public https URLs only");
            WebhookTargets::default()
        })
    }

    /// Whether a delivery may connect to `ip`.
    pub fn admits(&self, ip: IpAddr) -> bool {
        is_public_address(ip) || (self.allow_private && !never_admitted(ip))
    }

    /// The URL, if it is one an endpoint may have (its syntax: scheme, host, no credentials, no
    /// fragment); where it resolves is [`Self::check_addresses`]'s.
    pub fn check_url(&self, text: &str) -> Result<url::Url, String> {
        if text.chars().count() > MAX_WEBHOOK_URL_CHARS {
            return Err(format!("url must be at most {MAX_WEBHOOK_URL_CHARS} characters"));
        }
        let url = url::Url::parse(text).map_err(|e| format!("url is not a URL: {e}"))?;
        match url.scheme() {
            "https" => {}
            "http" if self.allow_private => {}
            _ => return Err("url must be an https URL".into()),
        }
        if url.host().is_none() {
            return Err("url must name a host".into());
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err("url must not carry credentials".into());
        }
        if url.fragment().is_some() {
            return Err("url must not have a fragment".into());
        }
        Ok(url)
    }

    /// Resolves the URL's host and requires every address to be admitted ([`Self::admits`]).
    pub async fn check_addresses(&self, url: &url::Url) -> Result<Vec<SocketAddr>, String> {
        let port = url.port_or_known_default().unwrap_or(443);
        match resolve_admitted(url, port, |ip| self.admits(ip)).await {
            Ok(addresses) => Ok(addresses),
            Err(Refused::NoSuchHost) => Err("url: its host does not resolve".into()),
            Err(Refused::Address(ip)) => Err(format!(
                "url: its host resolves to an address that is not public ({ip}); webhooks are delivered to public \
                 addresses only"
            )),
        }
    }
}

/// Addresses no webhook reaches even when private ones are allowed: unspecified, link-local
/// (where the cloud metadata service answers) and the EC2 IPv6 metadata address.
fn never_admitted(ip: IpAddr) -> bool {
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    };
    match ip {
        IpAddr::V4(v4) => v4.is_unspecified() || v4.is_link_local(),
        IpAddr::V6(v6) => {
            v6.is_unspecified()
                || (v6.segments()[0] & 0xffc0) == 0xfe80
                || v6 == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn webhook_targets_are_public_unless_relaxed_and_never_the_metadata_service() {
        let strict = WebhookTargets { allow_private: false };
        let relaxed = WebhookTargets { allow_private: true };
        for (address, strictly, relaxedly) in [
            ("93.184.215.14", true, true),
            ("127.0.0.1", false, true),
            ("10.1.2.3", false, true),
            ("192.168.0.10", false, true),
            ("169.254.169.254", false, false),
            ("169.254.1.1", false, false),
            ("0.0.0.0", false, false),
            ("::ffff:169.254.169.254", false, false),
            ("fd00:ec2::254", false, false),
            ("fe80::1", false, false),
            ("::1", false, true),
        ] {
            let ip: IpAddr = address.parse().unwrap();
            assert_eq!((strict.admits(ip), relaxed.admits(ip)), (strictly, relaxedly), "{address}");
        }
        assert!(strict.check_url("https://hooks.example.com/in").is_ok());
        assert!(strict.check_url("http://hooks.example.com/in").is_err());
        assert!(relaxed.check_url("http://127.0.0.1:8080/in").is_ok());
        assert!(strict.check_url("https://user:pw@hooks.example.com/").is_err());
        assert!(strict.check_url("https://hooks.example.com/#x").is_err());
        assert!(strict.check_url("ftp://hooks.example.com/").is_err());
        assert!(strict.check_url("not a url").is_err());
        assert_eq!(WebhookTargets::from_value(Some("true")), Ok(relaxed));
        assert_eq!(WebhookTargets::from_value(None), Ok(strict));
        assert!(WebhookTargets::from_value(Some("yes")).is_err());
    }

    #[test]
    fn addresses_are_classified() {
        let table: &[(&str, bool)] = &[
            ("93.184.215.14", true),
            ("8.8.8.8", true),
            ("100.63.255.255", true),
            ("100.128.0.0", true),
            ("172.32.0.1", true),
            ("0.0.0.0", false),
            ("0.1.2.3", false),
            ("10.0.0.1", false),
            ("127.0.0.1", false),
            ("127.255.255.254", false),
            ("100.64.0.1", false),
            ("100.127.255.255", false),
            ("169.254.169.254", false),
            ("172.16.0.1", false),
            ("172.31.255.255", false),
            ("192.168.1.1", false),
            ("192.0.0.8", false),
            ("192.0.2.1", false),
            ("198.18.0.1", false),
            ("198.51.100.7", false),
            ("203.0.113.9", false),
            ("224.0.0.1", false),
            ("239.255.255.250", false),
            ("240.0.0.1", false),
            ("255.255.255.255", false),
            ("2606:4700::6810:84e5", true),
            ("2a00:1450:4001::200e", true),
            ("::", false),
            ("::1", false),
            ("fe80::1", false),
            ("fc00::1", false),
            ("fd12:3456::1", false),
            ("fec0::1", false),
            ("ff02::1", false),
            ("2001:db8::1", false),
            ("3fff::1", false),
            ("2001::1", false),
            ("2002:c0a8:0101::1", false),
            ("64:ff9b::a00:1", false),
            ("100::1", false),
            ("::ffff:127.0.0.1", false),
            ("::ffff:10.0.0.1", false),
            ("::ffff:169.254.169.254", false),
            ("::ffff:8.8.8.8", true),
            ("::127.0.0.1", false),
        ];
        for (address, public) in table {
            let ip: IpAddr = address.parse().unwrap();
            assert_eq!(is_public_address(ip), *public, "{address}");
        }
    }
}
