//! Where `fetch` may go. It runs in cairn's own process, outside the
//! sandbox, so it holds its own line: no loopback, link-local, private or
//! otherwise local address unless an allow rule names the host (checked on
//! the name's every resolved address, so a public name that resolves to
//! 127.0.0.1 is refused too), and a redirect is followed only to the host
//! the call was approved for or one a rule names — any other target is
//! handed back to the model, whose next call the gate judges afresh.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// The hosts `fetch(HOST)` allow rules name (a rule covers subdomains too).
#[derive(Debug, Clone, Default)]
pub struct Named(Arc<Vec<String>>);

impl Named {
    pub fn new(hosts: Vec<String>) -> Named {
        Named(Arc::new(
            hosts.into_iter().map(|h| h.to_ascii_lowercase()).collect(),
        ))
    }

    pub fn covers(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        self.0
            .iter()
            .any(|h| host == *h || host.ends_with(&format!(".{h}")))
    }
}

/// Whether an address is one only this machine or its network reaches.
pub fn is_local(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || a == 0
                || (a == 100 && (64..128).contains(&b)) // shared address space
                || (a == 198 && (b == 18 || b == 19)) // benchmarking
                || a >= 240
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_local(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00 // unique local
                || (first & 0xffc0) == 0xfe80 // link-local
                || (first & 0xffc0) == 0xfec0 // site-local
        }
    }
}

/// Why `host` may not be fetched, if it may not: an IP literal that is
/// local and not named by a rule.
pub fn refuse_literal(host: &str, named: &Named) -> Option<String> {
    let ip: IpAddr = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse()
        .ok()?;
    (is_local(ip) && !named.covers(host)).then(|| refusal(host, ip))
}

fn refusal(host: &str, ip: IpAddr) -> String {
    format!(
        "fetch does not read {host} ({ip} is a loopback, link-local or private address); only an \
         allow rule naming the host, such as `fetch({host})`, lets fetch reach it"
    )
}

/// Resolves names as the system does, then drops every local address of a
/// name no rule names.
pub struct Resolver {
    pub named: Named,
}

impl Resolve for Resolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_string();
        let named = self.named.clone();
        Box::pin(async move {
            let lookup = host.clone();
            let addrs: Vec<SocketAddr> =
                tokio::task::spawn_blocking(move || (lookup.as_str(), 0).to_socket_addrs())
                    .await
                    .map_err(|e| Box::new(e) as Box<dyn std::error::Error + Send + Sync>)??
                    .collect();
            if named.covers(&host) {
                return Ok(Box::new(addrs.into_iter()) as Addrs);
            }
            let open: Vec<SocketAddr> = addrs
                .iter()
                .copied()
                .filter(|a| !is_local(a.ip()))
                .collect();
            match (open.is_empty(), addrs.first()) {
                (true, Some(first)) => Err(refusal(&host, first.ip()).into()),
                _ => Ok(Box::new(open.into_iter()) as Addrs),
            }
        })
    }
}

/// The redirect policy: follow only to the first URL's host, or to one a
/// rule names, over http(s), to no local IP literal a rule does not name;
/// at most `max` hops.
pub fn redirects(first_host: String, named: Named, max: usize) -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(move |attempt| {
        if attempt.previous().len() > max {
            return attempt.error(format!("redirected more than {max} times"));
        }
        let url = attempt.url().clone();
        if !matches!(url.scheme(), "http" | "https") {
            return attempt.error(format!("redirected to {url}, which is not http(s)"));
        }
        let Some(host) = url.host_str() else {
            return attempt.error(format!("redirected to {url}, which names no host"));
        };
        if let Some(why) = refuse_literal(host, &named) {
            return attempt.error(why);
        }
        let name = host.to_ascii_lowercase();
        if name == first_host || named.covers(&name) {
            attempt.follow()
        } else {
            attempt.error(format!(
                "redirected to {url}, another host than the one approved; fetch that URL in a \
                 new call if it is needed (it is judged on its own)"
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_addresses_are_recognised() {
        for local in [
            "127.0.0.1",
            "127.0.0.2",
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
            assert!(is_local(local.parse().unwrap()), "{local}");
        }
        for public in ["93.184.216.34", "1.1.1.1", "2606:4700::1111"] {
            assert!(!is_local(public.parse().unwrap()), "{public}");
        }
    }

    #[test]
    fn a_rule_names_a_host_and_its_subdomains() {
        let named = Named::new(vec!["localhost".into(), "docs.rs".into()]);
        assert!(named.covers("localhost"));
        assert!(named.covers("api.docs.rs"));
        assert!(!named.covers("evildocs.rs"));
        assert!(!named.covers("127.0.0.1"));
        assert!(refuse_literal("127.0.0.1", &named).is_some());
        assert!(refuse_literal("[::1]", &named).is_some());
        assert!(refuse_literal("1.1.1.1", &named).is_none());
        assert!(refuse_literal("localhost", &named).is_none());
    }
}
