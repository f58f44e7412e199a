//! The viewer: web pages that list episodes and show each one as its environment looks (the
//! Wordle board, the notebook, the desktop's filmstrip), live from a server's hub or from a
//! folder of recorded trajectories ([`recorded`]).
//!
//! The pages are plain HTML, CSS and one script, written for this and embedded in the binary:
//! no build step, nothing fetched from elsewhere. They read the same control plane any client
//! reads (`GET /episodes`, `/episodes/{id}`, `/episodes/{id}/trajectory?after=N`,
//! `/episodes/{id}/images/NAME`) and a person plays through the same tools an agent calls
//! (`POST /episodes/{id}/call`). Every route sits behind the server's Host, Origin and token
//! checks; a token given once in a page's URL (`/?token=…`) becomes an `HttpOnly`,
//! `SameSite=Strict` cookie and is taken out of the address bar.

pub mod recorded;

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use mcpgym_serve::Guard;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::hub::Hub;

/// Episodes a list answers at most, newest first.
pub const MAX_LISTED: usize = 5000;
/// Episodes a list answers when the request does not say.
pub const DEFAULT_LISTED: usize = 500;

/// What the pages may load and run: their own script and styles, images from the server, and
/// requests to it; nothing inline, nothing from elsewhere, no framing. An agent's output
/// (a cell's HTML, a page title) is shown as text, and this keeps it that way.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

const INDEX_HTML: &str = include_str!("assets/index.html");
const EPISODE_HTML: &str = include_str!("assets/episode.html");
const VIEWER_JS: &str = include_str!("assets/viewer.js");
const VIEWER_CSS: &str = include_str!("assets/viewer.css");

/// The page and asset routes, the same for a live server and a folder of recordings.
pub fn pages<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/", get(|| async { page(INDEX_HTML) }))
        .route("/view/{id}", get(|| async { page(EPISODE_HTML) }))
        .route("/viewer/{asset}", get(asset))
}

/// The live routes: the pages, and the episode list from the hub; any other path is answered
/// with the sentence naming the routes a live server has ([`live_unknown_route`]).
pub fn live_routes() -> Router<Arc<Hub>> {
    pages()
        .route("/episodes", get(live_list))
        .fallback(live_unknown_route)
}

/// The pages' own routes, as a 404 names them.
pub const PAGE_ROUTES: &str = "the viewer's pages / (the episode list) and /view/{id}, its assets /viewer/viewer.js and /viewer/viewer.css";

/// A 404 for a path no route serves: names the path and the routes there are.
pub fn unknown_route(uri: &Uri, routes: &str) -> Response {
    error(
        StatusCode::NOT_FOUND,
        format!(
            "no route {:?} on this server: it serves {routes}",
            uri.path()
        ),
    )
}

/// A live server's answer to a path no route serves.
async fn live_unknown_route(State(hub): State<Arc<Hub>>, uri: Uri) -> Response {
    let mcp: Vec<String> = hub
        .envs()
        .map(|env| format!("/{}/mcp", env.name()))
        .collect();
    let routes = format!(
        "{PAGE_ROUTES}; the control plane /healthz, /metrics, /tasks, /tools, /episodes (GET lists, POST starts one), /episodes/{{id}} (GET, DELETE), /episodes/{{id}}/prompt, /episodes/{{id}}/trajectory?after=N, /episodes/{{id}}/images/NAME, /episodes/{{id}}/calls/KEY and POST /episodes/{{id}}/call; MCP at {} and /episodes/{{id}}/mcp; and the ORS and OpenEnv routes",
        mcp.join(", ")
    );
    unknown_route(&uri, &routes)
}

fn page(html: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
            (header::CACHE_CONTROL, "no-cache"),
            (header::REFERRER_POLICY, "no-referrer"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        html,
    )
        .into_response()
}

async fn asset(Path(name): Path<String>) -> Response {
    let (content_type, body) = match name.as_str() {
        "viewer.js" => ("text/javascript; charset=utf-8", VIEWER_JS),
        "viewer.css" => ("text/css; charset=utf-8", VIEWER_CSS),
        _ => {
            return error(
                StatusCode::NOT_FOUND,
                format!("no viewer asset {name:?}: the viewer has viewer.js and viewer.css"),
            );
        }
    };
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        body,
    )
        .into_response()
}

fn error(status: StatusCode, message: String) -> Response {
    (status, axum::Json(json!({ "error": message }))).into_response()
}

/// `?limit=N`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    /// Episodes to answer at most.
    pub limit: Option<usize>,
}

impl ListQuery {
    /// The limit asked for, or the sentence saying why it cannot be served.
    pub fn limit(
        query: Result<Query<ListQuery>, axum::extract::rejection::QueryRejection>,
    ) -> Result<usize, String> {
        let limit = match query {
            Ok(Query(query)) => query.limit.unwrap_or(DEFAULT_LISTED),
            Err(rejection) => return Err(format!("{}; give ?limit=N", rejection.body_text())),
        };
        if limit > MAX_LISTED {
            return Err(format!(
                "limit {limit} is too large: ask for at most {MAX_LISTED} episodes"
            ));
        }
        Ok(limit)
    }
}

/// `?after=N` on a trajectory: only the records of turns after N (for a page that polls).
#[derive(Debug, Deserialize)]
pub struct AfterQuery {
    /// The last turn the caller has.
    #[serde(default)]
    pub after: u32,
}

impl AfterQuery {
    /// The turn asked for, or the sentence saying what is wrong with the query.
    pub fn turn(
        query: Result<Query<AfterQuery>, axum::extract::rejection::QueryRejection>,
    ) -> Result<u32, String> {
        query
            .map(|Query(query)| query.after)
            .map_err(|rejection| format!("{}; give ?after=N, a turn number", rejection.body_text()))
    }
}

/// `GET /episodes`: live episodes, newest first, with the recently finished ones the summary
/// counts.
async fn live_list(
    State(hub): State<Arc<Hub>>,
    query: Result<Query<ListQuery>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let limit = match ListQuery::limit(query) {
        Ok(limit) => limit,
        Err(message) => return error(StatusCode::BAD_REQUEST, message),
    };
    let (slots, total) = hub.list(limit);
    let now = std::time::SystemTime::now();
    let episodes: Vec<Value> = slots
        .iter()
        .map(|slot| {
            let mut status = serde_json::to_value(slot.status()).unwrap_or_default();
            if let Value::Object(map) = &mut status {
                let age = now.duration_since(slot.started).unwrap_or_default();
                map.insert("age_s".into(), json!(age.as_secs_f64()));
                map.insert("live".into(), json!(true));
            }
            status
        })
        .collect();
    let envs: Vec<&str> = hub.envs().map(|env| env.name()).collect();
    axum::Json(json!({
        "source": "live",
        "envs": envs,
        "total": total,
        "episodes": episodes,
        "finished": hub.recent_finished(),
    }))
    .into_response()
}

/// For a page opened with `?token=…`: when it is the server's token, a redirect to the same
/// page without it that sets the token cookie; when it is not, `None` (the guard then refuses
/// the request as it would any other without the token).
pub fn token_in_url(guard: &Guard, request: &Request) -> Option<Response> {
    let path = request.uri().path();
    if request.method() != axum::http::Method::GET || !(path == "/" || path.starts_with("/view/")) {
        return None;
    }
    let query = request.uri().query()?;
    let mut given = None;
    let mut rest = Vec::new();
    for pair in query.split('&') {
        match pair.strip_prefix("token=") {
            // `%XX` escapes and `+`, as a token pasted into a URL by hand may carry.
            Some(_) => {
                given = form_urlencoded::parse(pair.as_bytes())
                    .next()
                    .map(|(_, value)| value.into_owned());
            }
            None if !pair.is_empty() => rest.push(pair),
            None => {}
        }
    }
    let cookie = guard.token_cookie(&given?)?;
    let location = if rest.is_empty() {
        path.to_owned()
    } else {
        format!("{path}?{}", rest.join("&"))
    };
    let mut response = StatusCode::SEE_OTHER.into_response();
    let headers = response.headers_mut();
    headers.insert(header::LOCATION, HeaderValue::from_str(&location).ok()?);
    headers.insert(header::SET_COOKIE, HeaderValue::from_str(&cookie).ok()?);
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    Some(response)
}

#[cfg(test)]
mod tests {
    use axum::body::Body;

    use super::*;

    fn get(uri: &str) -> Request {
        Request::builder().uri(uri).body(Body::empty()).unwrap()
    }

    #[test]
    fn a_token_in_a_page_url_becomes_a_cookie_and_leaves_the_url() {
        let guard = Guard::new(Some("a b+c;".into()));
        let response = token_in_url(&guard, &get("/view/ab?token=a+b%2Bc%3B&x=1")).unwrap();
        assert_eq!(response.status(), StatusCode::SEE_OTHER);
        assert_eq!(response.headers()[header::LOCATION], "/view/ab?x=1");
        let cookie = response.headers()[header::SET_COOKIE].to_str().unwrap();
        assert_eq!(Some(cookie.to_owned()), guard.token_cookie("a b+c;"));
        let home = token_in_url(&guard, &get("/?token=a%20b%2Bc%3B")).unwrap();
        assert_eq!(home.headers()[header::LOCATION], "/");
        // A wrong token, a route that is not a page, or a POST: the guard decides as usual.
        assert!(token_in_url(&guard, &get("/?token=a+b")).is_none());
        assert!(token_in_url(&guard, &get("/episodes?token=a+b%2Bc%3B")).is_none());
        let post = Request::builder()
            .method("POST")
            .uri("/?token=a+b%2Bc%3B")
            .body(Body::empty())
            .unwrap();
        assert!(token_in_url(&guard, &post).is_none());
        assert!(token_in_url(&Guard::new(None), &get("/?token=x")).is_none());
    }
}
