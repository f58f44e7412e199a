//! Which requests a server answers at all: its `Host` and `Origin` allow-lists and its token,
//! checked the same way by every server.
//!
//! - **Host**: a server bound to loopback answers loopback names only (`localhost`,
//!   `*.localhost`, `127.0.0.1` and the rest of `127.0.0.0/8`, `[::1]`), so a web page cannot
//!   reach it through DNS rebinding (a name of the attacker's that resolves to 127.0.0.1).
//!   `*.localhost` is safe to accept: RFC 6761 reserves it for loopback, resolvers and browsers
//!   never send it elsewhere, so no attacker's page can be served from such a name.
//! - **Origin**: a browser page may call the server only from a loopback origin or one it was
//!   started with; a request without `Origin` (not from a browser) passes.
//! - **Token**: when the server has one, every request but its open routes carries it as
//!   `Authorization: Bearer <token>` (the scheme in any case) or `X-API-Key: <token>` (how ORS
//!   clients and E2B SDKs send their key), compared in constant time; or, from a browser, as
//!   the [`TOKEN_COOKIE`] cookie a page sets after the token was given once in its URL
//!   ([`Guard::token_cookie`]). The cookie is `HttpOnly` and `SameSite=Strict`, so another
//!   site's page can neither read it nor have it sent.

use http::{HeaderMap, HeaderValue, Method, StatusCode, header};

use crate::auth::{bearer_token, constant_time_eq};

/// The cookie a browser carries the token in.
pub const TOKEN_COOKIE: &str = "mcpgym_token";

/// Which browser origins may call a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origins {
    /// Any origin (the server's token keeps pages out).
    Any,
    /// Loopback pages (`http://localhost:5173`, `https://127.0.0.1`), and these others.
    Listed {
        /// Origins allowed besides loopback ones (`https://app.example`; a trailing `/` and
        /// case do not matter).
        also: Vec<String>,
        /// The command-line option that adds one (`--allow-origin`), named in refusals.
        option: Option<&'static str>,
    },
}

impl Origins {
    /// Loopback origins only, with no option to add others.
    pub fn loopback() -> Self {
        Origins::Listed {
            also: Vec::new(),
            option: None,
        }
    }
}

/// Host, Origin and token checks for one server. [`Guard::new`] starts from a server that
/// answers any Host and Origin without a token.
#[derive(Debug, Clone)]
pub struct Guard {
    token: Option<String>,
    loopback_hosts_only: bool,
    origins: Origins,
    /// Routes that need no token, as (method, path); `None` is any method.
    open: Vec<(Option<Method>, String)>,
}

/// Why a request was refused. Its `Display` is the sentence to answer with; each server wraps
/// it in its own error body.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The `Host` is not a loopback name on a server that answers loopback names only.
    #[error(
        "Host {0:?} is not allowed: this server answers loopback names only (localhost, *.localhost, 127.0.0.1, [::1])"
    )]
    Host(String),
    /// The `Origin` is neither loopback nor allowed; the option adds an origin.
    #[error("Origin {origin:?} is not allowed; {}", origin_remedy(origin, *option))]
    Origin {
        /// The origin as sent.
        origin: String,
        /// The command-line option that allows another origin, if the server has one.
        option: Option<&'static str>,
    },
    /// The token is missing or wrong.
    #[error(
        "missing or wrong token: send the header Authorization: Bearer <token> (or X-API-Key: <token>)"
    )]
    Token,
}

fn origin_remedy(origin: &str, option: Option<&str>) -> String {
    match option {
        Some(option) => format!("start the server with {option} {origin} to allow it"),
        None => "only loopback pages may call this server".to_owned(),
    }
}

impl Refusal {
    /// 403 for a foreign Host or Origin, 401 for a missing or wrong token.
    pub fn status(&self) -> StatusCode {
        match self {
            Refusal::Host(_) | Refusal::Origin { .. } => StatusCode::FORBIDDEN,
            Refusal::Token => StatusCode::UNAUTHORIZED,
        }
    }

    /// The `WWW-Authenticate` challenge a 401 must carry (RFC 9110), if any.
    pub fn challenge(&self) -> Option<HeaderValue> {
        matches!(self, Refusal::Token).then(|| HeaderValue::from_static("Bearer"))
    }
}

impl Guard {
    /// A server that requires `token` when set, and otherwise answers any Host and Origin.
    pub fn new(token: Option<String>) -> Self {
        Guard {
            token,
            loopback_hosts_only: false,
            origins: Origins::Any,
            open: Vec::new(),
        }
    }

    /// Answer loopback `Host` names only (for a server bound to loopback).
    pub fn loopback_hosts_only(mut self, on: bool) -> Self {
        self.loopback_hosts_only = on;
        self
    }

    /// Which browser origins may call the server.
    pub fn origins(mut self, origins: Origins) -> Self {
        self.origins = origins;
        self
    }

    /// `path` needs no token, for `method` (`HEAD` goes with `GET`) or, with `None`, any.
    pub fn open_route(mut self, method: Option<Method>, path: impl Into<String>) -> Self {
        self.open.push((method, path.into()));
        self
    }

    /// Whether the server has a token.
    pub fn has_token(&self) -> bool {
        self.token.is_some()
    }

    /// Every check: Host, then Origin, then the token.
    pub fn check(&self, method: &Method, path: &str, headers: &HeaderMap) -> Result<(), Refusal> {
        self.check_host_and_origin(headers)?;
        self.check_token(method, path, headers)
    }

    /// The Host and Origin checks alone.
    pub fn check_host_and_origin(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        if self.loopback_hosts_only {
            let host = headers
                .get(header::HOST)
                .and_then(|h| h.to_str().ok())
                .unwrap_or("");
            if !is_loopback_authority(host) {
                return Err(Refusal::Host(host.to_owned()));
            }
        }
        if let Origins::Listed { also, option } = &self.origins
            && let Some(origin) = headers.get(header::ORIGIN)
        {
            let origin = origin.to_str().unwrap_or("");
            if !origin_allowed(origin, also) {
                return Err(Refusal::Origin {
                    origin: origin.to_owned(),
                    option: *option,
                });
            }
        }
        Ok(())
    }

    /// The token check alone: passes when the server has no token, the route is open, or the
    /// request carries the token.
    pub fn check_token(
        &self,
        method: &Method,
        path: &str,
        headers: &HeaderMap,
    ) -> Result<(), Refusal> {
        if self.token.is_none() || self.is_open(method, path) || self.carries_token(headers) {
            Ok(())
        } else {
            Err(Refusal::Token)
        }
    }

    /// Whether the request carries the server's token, as a bearer token or an `X-API-Key`;
    /// false when the server has none.
    pub fn carries_token(&self, headers: &HeaderMap) -> bool {
        let Some(token) = &self.token else {
            return false;
        };
        let api_key = headers.get("x-api-key").and_then(|v| v.to_str().ok());
        // Either header may carry it: a client can send an unrelated Authorization too.
        if [bearer_token(headers), api_key]
            .into_iter()
            .flatten()
            .any(|given| constant_time_eq(given, token))
        {
            return true;
        }
        headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(';'))
            .filter_map(|pair| pair.trim().strip_prefix(TOKEN_COOKIE)?.strip_prefix('='))
            .filter_map(hex_decode)
            .any(|given| constant_time_eq(&given, token))
    }

    /// The `Set-Cookie` value that lets a browser carry the token from now on, when `given` is
    /// the server's token; `None` when it is not (or the server has none).
    pub fn token_cookie(&self, given: &str) -> Option<String> {
        let token = self.token.as_ref()?;
        constant_time_eq(given, token).then(|| {
            let hex: String = token.bytes().map(|b| format!("{b:02x}")).collect();
            format!("{TOKEN_COOKIE}={hex}; Path=/; HttpOnly; SameSite=Strict")
        })
    }

    fn is_open(&self, method: &Method, path: &str) -> bool {
        let method = if method == Method::HEAD {
            &Method::GET
        } else {
            method
        };
        self.open
            .iter()
            .any(|(m, p)| p == path && m.as_ref().is_none_or(|m| m == method))
    }
}

/// The text a cookie's hex value encodes (hex keeps any token within cookie syntax).
fn hex_decode(hex: &str) -> Option<String> {
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    let bytes = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect::<Option<Vec<u8>>>()?;
    String::from_utf8(bytes).ok()
}

/// Whether `authority` (`host[:port]`, `[v6][:port]`) names this machine: `localhost`,
/// `*.localhost` (RFC 6761), or a loopback address; a trailing `.` and case do not matter.
pub(crate) fn is_loopback_authority(authority: &str) -> bool {
    let name = if let Some(rest) = authority.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        authority
            .rsplit_once(':')
            .map_or(authority, |(name, _)| name)
    };
    let name = name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase();
    name == "localhost"
        || name.ends_with(".localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Whether a page of `origin` may call: an `http`/`https` loopback origin, or one of `also`.
fn origin_allowed(origin: &str, also: &[String]) -> bool {
    let normalized = origin.trim_end_matches('/');
    if also
        .iter()
        .any(|a| a.trim_end_matches('/').eq_ignore_ascii_case(normalized))
    {
        return true;
    }
    match normalized.split_once("://") {
        Some((scheme, authority))
            if scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https") =>
        {
            is_loopback_authority(authority)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(*name, HeaderValue::from_static(value));
        }
        headers
    }

    fn loopback_guard() -> Guard {
        Guard::new(None)
            .loopback_hosts_only(true)
            .origins(Origins::Listed {
                also: vec!["https://app.example/".into()],
                option: Some("--allow-origin"),
            })
    }

    #[test]
    fn loopback_names() {
        for ok in [
            "localhost",
            "localhost:8000",
            "LOCALHOST:8000",
            "localhost.:8000",
            "49999-iabc.localhost:3000",
            "a.b.localhost",
            "127.0.0.1",
            "127.1.2.3:80",
            "[::1]",
            "[::1]:9",
        ] {
            assert!(is_loopback_authority(ok), "{ok}");
        }
        for bad in [
            "",
            "evil.example:8000",
            "localhost.evil.example",
            "evil-localhost:80",
            "10.0.0.1:80",
            "0.0.0.0",
            "[::]:80",
            "[::2]:80",
            "::1",
        ] {
            assert!(!is_loopback_authority(bad), "{bad}");
        }
    }

    #[test]
    fn foreign_hosts_are_refused_only_when_loopback_hosts_only() {
        let guard = loopback_guard();
        let get = Method::GET;
        assert_eq!(
            guard.check(&get, "/", &headers(&[("host", "localhost:8000")])),
            Ok(())
        );
        assert_eq!(
            guard.check(&get, "/", &headers(&[("host", "[::1]:8000")])),
            Ok(())
        );
        let refused = guard.check(&get, "/", &headers(&[("host", "attacker.example")]));
        assert_eq!(refused, Err(Refusal::Host("attacker.example".into())));
        let refusal = refused.unwrap_err();
        assert_eq!(refusal.status(), StatusCode::FORBIDDEN);
        assert_eq!(refusal.challenge(), None);
        assert!(refusal.to_string().contains("loopback names only"));
        assert!(matches!(
            guard.check(&get, "/", &HeaderMap::new()),
            Err(Refusal::Host(_))
        ));
        let open = Guard::new(Some("s3cret".into()));
        assert_eq!(
            open.check_host_and_origin(&headers(&[("host", "attacker.example")])),
            Ok(())
        );
    }

    #[test]
    fn origins() {
        let guard = loopback_guard();
        let with_origin = |origin: &'static str| {
            guard.check_host_and_origin(&headers(&[("host", "127.0.0.1"), ("origin", origin)]))
        };
        for ok in [
            "http://localhost:6274",
            "https://127.0.0.1",
            "http://[::1]:3000",
            "http://app.localhost:5173",
            "https://app.example",
            "HTTPS://APP.EXAMPLE/",
        ] {
            assert_eq!(with_origin(ok), Ok(()), "{ok}");
        }
        for bad in [
            "https://evil.example",
            "null",
            "file://localhost",
            "http://localhost.evil.example",
        ] {
            let refusal = with_origin(bad).unwrap_err();
            assert_eq!(refusal.status(), StatusCode::FORBIDDEN, "{bad}");
            assert!(
                refusal
                    .to_string()
                    .contains(&format!("--allow-origin {bad}")),
                "{refusal}"
            );
        }
        // No Origin: not a browser.
        assert_eq!(
            guard.check_host_and_origin(&headers(&[("host", "127.0.0.1")])),
            Ok(())
        );
        let no_option = Guard::new(None).origins(Origins::loopback());
        let refusal = no_option
            .check_host_and_origin(&headers(&[("origin", "https://app.example")]))
            .unwrap_err();
        assert!(
            refusal.to_string().contains("only loopback pages"),
            "{refusal}"
        );
        let any = Guard::new(Some("s3cret".into()));
        assert_eq!(
            any.check_host_and_origin(&headers(&[("origin", "https://evil.example")])),
            Ok(())
        );
    }

    #[test]
    fn tokens_come_as_a_bearer_in_any_case_or_an_api_key() {
        let guard = Guard::new(Some("s3cret".into()));
        let post = Method::POST;
        for pairs in [
            &[("authorization", "Bearer s3cret")][..],
            &[("authorization", "bearer s3cret")],
            &[("authorization", "BEARER s3cret")],
            &[("x-api-key", "s3cret")],
            &[("authorization", "Bearer other"), ("x-api-key", "s3cret")],
        ] {
            assert_eq!(
                guard.check(&post, "/episodes", &headers(pairs)),
                Ok(()),
                "{pairs:?}"
            );
        }
        for pairs in [
            &[][..],
            &[("authorization", "Bearer s3cre")],
            &[("authorization", "Bearer s3cret2")],
            &[("authorization", "Basic s3cret")],
            &[("x-api-key", "wrong")],
            &[("x-access-token", "s3cret")],
        ] {
            let refusal = guard
                .check(&post, "/episodes", &headers(pairs))
                .unwrap_err();
            assert_eq!(refusal, Refusal::Token, "{pairs:?}");
            assert_eq!(refusal.status(), StatusCode::UNAUTHORIZED);
            assert_eq!(
                refusal.challenge(),
                Some(HeaderValue::from_static("Bearer"))
            );
        }
        let tokenless = Guard::new(None);
        assert_eq!(
            tokenless.check(&post, "/episodes", &HeaderMap::new()),
            Ok(())
        );
        assert!(!tokenless.carries_token(&headers(&[("x-api-key", "")])));
    }

    #[test]
    fn a_token_given_once_becomes_a_cookie_that_carries_it() {
        let guard = Guard::new(Some("s3 cret;".into()));
        assert_eq!(guard.token_cookie("wrong"), None);
        assert_eq!(Guard::new(None).token_cookie(""), None);
        let cookie = guard.token_cookie("s3 cret;").unwrap();
        assert_eq!(
            cookie,
            "mcpgym_token=733320637265743b; Path=/; HttpOnly; SameSite=Strict"
        );
        let value = cookie.split(';').next().unwrap().to_owned();
        let get = Method::GET;
        let mut with_cookie = HeaderMap::new();
        with_cookie.append(
            header::COOKIE,
            HeaderValue::from_str(&format!("theme=dark; {value}")).unwrap(),
        );
        assert_eq!(guard.check(&get, "/", &with_cookie), Ok(()));
        for bad in [
            "mcpgym_token=7333",
            "mcpgym_token=zz",
            "mcpgym_token_x=73332063726574",
        ] {
            assert_eq!(
                guard.check(&get, "/", &headers(&[("cookie", bad)])),
                Err(Refusal::Token),
                "{bad}"
            );
        }
    }

    #[test]
    fn open_routes_need_no_token() {
        let guard = Guard::new(Some("s3cret".into()))
            .open_route(None, "/healthz")
            .open_route(Some(Method::GET), "/health");
        let none = HeaderMap::new();
        assert_eq!(guard.check(&Method::GET, "/healthz", &none), Ok(()));
        assert_eq!(guard.check(&Method::POST, "/healthz", &none), Ok(()));
        assert_eq!(guard.check(&Method::GET, "/health", &none), Ok(()));
        assert_eq!(guard.check(&Method::HEAD, "/health", &none), Ok(()));
        for (method, path) in [
            (Method::POST, "/health"),
            (Method::GET, "/health/"),
            (Method::GET, "/healthz/x"),
            (Method::GET, "/metrics"),
        ] {
            assert_eq!(
                guard.check(&method, path, &none),
                Err(Refusal::Token),
                "{method} {path}"
            );
        }
        // An open route still answers loopback names only.
        let loopback = guard.loopback_hosts_only(true);
        assert!(matches!(
            loopback.check(
                &Method::GET,
                "/healthz",
                &headers(&[("host", "attacker.example")])
            ),
            Err(Refusal::Host(_))
        ));
    }
}
