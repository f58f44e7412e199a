//! How a data-plane request names its sandbox: by the
//! [`SANDBOX_ID`](crate::headers::SANDBOX_ID) and [`SANDBOX_PORT`](crate::headers::SANDBOX_PORT)
//! headers when one URL serves every sandbox, or by a host `<port>-<sandboxID>.<domain>`.

/// The host of a sandbox's port: `<port>-<id>.<domain>`.
pub fn sandbox_host(port: u16, id: &str, domain: &str) -> String {
    format!("{port}-{id}.{domain}")
}

/// `(sandbox id, port)` from a host `<port>-<id>.<domain>` (a `:port` after it is ignored);
/// `None` for any other host.
pub fn parse_sandbox_host(host: &str) -> Option<(&str, u16)> {
    let (label, _domain) = host.split_once('.')?;
    let (port, id) = label.split_once('-')?;
    let port: u16 = port.parse().ok()?;
    (!id.is_empty()).then_some((id, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_round_trip() {
        let host = sandbox_host(49983, "iabc", "localhost");
        assert_eq!(host, "49983-iabc.localhost");
        assert_eq!(parse_sandbox_host(&host), Some(("iabc", 49983)));
        assert_eq!(
            parse_sandbox_host("49999-i-x.e2b.app:443"),
            Some(("i-x", 49999))
        );
        for other in [
            "127.0.0.1:3000",
            "localhost",
            "x-y.z",
            "1-.z",
            "99999-a.z",
            "",
        ] {
            assert_eq!(parse_sandbox_host(other), None, "{other}");
        }
    }
}
