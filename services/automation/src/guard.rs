//! Where a webhook may post: http(s) URLs only, and — unless `allow_private` — never loopback,
//! link-local, private or otherwise non-public addresses. A name is checked on the addresses it
//! resolves to when the post connects (the resolver below is the client's only one), so a name
//! that resolves to a public address at creation and to 127.0.0.1 later (DNS rebinding) is
//! still refused. Redirects are not followed.

use crate::WebhookSettings;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

/// Whether `ip` is an address on the public internet.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_public_v4(v4),
            None => is_public_v6(v6),
        },
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    !(ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        // 100.64.0.0/10 (carrier-grade NAT), 198.18.0.0/15 (benchmarking), 240.0.0.0/4.
        || (a == 100 && (64..128).contains(&b))
        || (a == 198 && (b == 18 || b == 19))
        || a >= 240)
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    !(ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        // fc00::/7 unique local, fe80::/10 link-local, 2001:db8::/32 documentation.
        || (first & 0xfe00) == 0xfc00
        || (first & 0xffc0) == 0xfe80
        || (first == 0x2001 && ip.segments()[1] == 0x0db8))
}

/// Checks a subscription's URL: http(s), a host, and no address literal that is refused.
pub fn check_url(url: &str, allow_private: bool) -> Result<(), String> {
    let parsed = reqwest::Url::parse(url).map_err(|e| format!("url {url:?}: {e}"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!("url: only http and https, not {:?}", parsed.scheme()));
    }
    match parsed.host() {
        None => Err("url: needs a host".into()),
        Some(url::Host::Ipv4(ip)) => literal(IpAddr::V4(ip), allow_private),
        Some(url::Host::Ipv6(ip)) => literal(IpAddr::V6(ip), allow_private),
        Some(url::Host::Domain(_)) => Ok(()),
    }
}

fn literal(ip: IpAddr, allow_private: bool) -> Result<(), String> {
    if allow_private || is_public(ip) {
        Ok(())
    } else {
        Err(format!(
            "url: {ip} is not a public address (loopback, link-local and private targets need webhooks.allow_private)"
        ))
    }
}

/// Resolves names and keeps only the addresses a post may reach.
struct Guarded {
    allow_private: bool,
}

impl Resolve for Guarded {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        Box::pin(async move {
            let host = name.as_str().to_string();
            let all: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let allowed: Vec<SocketAddr> = all
                .iter()
                .copied()
                .filter(|a| allow_private || is_public(a.ip()))
                .collect();
            if allowed.is_empty() {
                let ips: Vec<String> = all.iter().map(|a| a.ip().to_string()).collect();
                return Err(format!(
                    "refused: {host} resolves to {} (not public; webhooks.allow_private is off)",
                    ips.join(", ")
                )
                .into());
            }
            Ok(Box::new(allowed.into_iter()) as Addrs)
        })
    }
}

/// The client every post goes through.
pub fn client(settings: &WebhookSettings) -> Result<reqwest::Client, reqwest::Error> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_millis(settings.timeout_ms))
        .connect_timeout(Duration::from_millis(settings.timeout_ms.min(5_000)))
        .dns_resolver(Arc::new(Guarded {
            allow_private: settings.allow_private,
        }))
        .user_agent(concat!("relay-mesh-webhooks/", env!("CARGO_PKG_VERSION")))
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_loopback_and_link_local_addresses_are_not_public() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
        ] {
            assert!(!is_public(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["1.1.1.1", "8.8.8.8", "2606:4700::1111"] {
            assert!(is_public(ip.parse().unwrap()), "{ip}");
        }
    }

    #[test]
    fn only_http_urls_with_a_public_literal_pass_unless_private_is_allowed() {
        assert!(check_url("https://hooks.example.com/x", false).is_ok());
        assert!(check_url("ftp://example.com/", false).is_err());
        assert!(check_url("file:///etc/passwd", false).is_err());
        assert!(check_url("http://127.0.0.1:8080/", false).is_err());
        assert!(check_url("http://[::1]/", false).is_err());
        assert!(check_url("http://169.254.169.254/latest/meta-data", false).is_err());
        assert!(check_url("http://127.0.0.1:8080/", true).is_ok());
        assert!(check_url("not a url", true).is_err());
    }
}
