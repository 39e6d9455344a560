//! An OAuth-protected MCP server for cairn's tests, on 127.0.0.1 only: one
//! listener is both the authorization server (metadata, dynamic client
//! registration, an authorize endpoint that approves at once and redirects
//! with a code, a token endpoint checking PKCE and handing out refresh
//! tokens) and the resource server, the test MCP server of mcp_server.rs at
//! `/mcp`, which answers 401 with a `WWW-Authenticate` challenge unless it
//! gets a live bearer token.
//!
//! Needs `mod mcp_server;` beside it (tests/support/mcp_server.rs).

#![allow(dead_code)]

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde_json::{Value, json};
use sha2::Digest;
use tokio_util::sync::CancellationToken;

type Body = BoxBody<Bytes, Infallible>;
type Mcp = StreamableHttpService<crate::mcp_server::TestServer, LocalSessionManager>;

/// What the server has seen, for tests to assert on.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Counts {
    pub registrations: u32,
    pub authorizations: u32,
    pub code_grants: u32,
    pub refresh_grants: u32,
    /// MCP requests answered 401.
    pub rejected: u32,
    /// MCP requests let through with a valid token.
    pub authorized: u32,
}

struct Grant {
    client_id: String,
    redirect_uri: String,
    challenge: String,
}

#[derive(Default)]
struct State {
    clients: HashMap<String, Vec<String>>,
    codes: HashMap<String, Grant>,
    access: HashMap<String, Instant>,
    refresh: HashMap<String, String>,
    expires_in: u64,
    /// Metadata naming this as the authorization page (a hostile server).
    authorization_endpoint: Option<String>,
    serial: u64,
    counts: Counts,
}

impl State {
    fn fresh(&mut self, kind: &str) -> String {
        self.serial += 1;
        format!("{kind}-{}", self.serial)
    }
}

/// A running server; dropping it does not stop it, cancel `stop`.
#[derive(Clone)]
pub struct OAuthServer {
    /// `http://127.0.0.1:PORT`, the issuer.
    pub base: String,
    state: Arc<Mutex<State>>,
}

impl OAuthServer {
    /// The MCP endpoint.
    pub fn mcp_url(&self) -> String {
        format!("{}/mcp", self.base)
    }

    pub fn counts(&self) -> Counts {
        self.lock().counts.clone()
    }

    /// Lifetime of the access tokens issued from now on.
    pub fn set_expires_in(&self, secs: u64) {
        self.lock().expires_in = secs;
    }

    /// Names `url` as the authorization page in the metadata, as a hostile
    /// server could (`file:`, `javascript:`).
    pub fn set_authorization_endpoint(&self, url: &str) {
        self.lock().authorization_endpoint = Some(url.to_string());
    }

    /// Forgets every access token, as a server that revoked them would.
    pub fn revoke_access_tokens(&self) {
        self.lock().access.clear();
    }

    /// The access tokens currently valid.
    pub fn live_tokens(&self) -> Vec<String> {
        let now = Instant::now();
        let state = self.lock();
        state
            .access
            .iter()
            .filter(|(_, until)| **until > now)
            .map(|(t, _)| t.clone())
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts on 127.0.0.1:0; serves until `stop` is cancelled.
    pub async fn start(stop: CancellationToken) -> std::io::Result<OAuthServer> {
        Self::start_on("127.0.0.1:0", stop).await
    }

    pub async fn start_on(addr: &str, stop: CancellationToken) -> std::io::Result<OAuthServer> {
        use hyper_util::rt::TokioIo;
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let server = OAuthServer {
            base: format!("http://{}", listener.local_addr()?),
            state: Arc::new(Mutex::new(State {
                expires_in: 3600,
                ..State::default()
            })),
        };
        let mut config = rmcp::transport::StreamableHttpServerConfig::default();
        config.cancellation_token = stop.child_token();
        let mcp: Mcp = StreamableHttpService::new(
            || Ok(crate::mcp_server::TestServer::new()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        let me = server.clone();
        tokio::spawn(async move {
            loop {
                let stream = tokio::select! {
                    _ = stop.cancelled() => return,
                    accepted = listener.accept() => match accepted {
                        Ok((stream, _)) => stream,
                        Err(_) => continue,
                    },
                };
                let (me, mcp, stop) = (me.clone(), mcp.clone(), stop.clone());
                tokio::spawn(async move {
                    let svc = hyper::service::service_fn(move |req| {
                        let (me, mcp) = (me.clone(), mcp.clone());
                        async move { Ok::<_, Infallible>(me.route(req, &mcp).await) }
                    });
                    let conn = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), svc);
                    tokio::select! {
                        _ = conn => {}
                        _ = stop.cancelled() => {}
                    }
                });
            }
        });
        Ok(server)
    }

    async fn route(&self, req: Request<Incoming>, mcp: &Mcp) -> Response<Body> {
        let path = req.uri().path().to_string();
        match path.as_str() {
            "/mcp" => self.resource(req, mcp).await,
            "/.well-known/oauth-protected-resource"
            | "/.well-known/oauth-protected-resource/mcp" => {
                json_response(StatusCode::OK, self.resource_metadata())
            }
            "/.well-known/oauth-authorization-server" => {
                json_response(StatusCode::OK, self.server_metadata())
            }
            "/register" => self.register(body_text(req).await),
            "/authorize" => self.authorize(req.uri().query().unwrap_or_default()),
            "/token" => self.token(&body_text(req).await),
            _ => json_response(StatusCode::NOT_FOUND, json!({"error": "not found"})),
        }
    }

    fn resource_metadata(&self) -> Value {
        json!({
            "resource": self.mcp_url(),
            "authorization_servers": [self.base],
            "bearer_methods_supported": ["header"],
            "scopes_supported": ["mcp"],
        })
    }

    fn server_metadata(&self) -> Value {
        let b = &self.base;
        let authorize = self.lock().authorization_endpoint.clone();
        json!({
            "issuer": b,
            "authorization_endpoint": authorize.unwrap_or_else(|| format!("{b}/authorize")),
            "token_endpoint": format!("{b}/token"),
            "registration_endpoint": format!("{b}/register"),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
            "scopes_supported": ["mcp"],
        })
    }

    /// The MCP endpoint, behind the bearer check.
    async fn resource(&self, req: Request<Incoming>, mcp: &Mcp) -> Response<Body> {
        let token = req
            .headers()
            .get(http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::to_string);
        let live = {
            let mut state = self.lock();
            let ok = token
                .as_ref()
                .and_then(|t| state.access.get(t))
                .is_some_and(|until| *until > Instant::now());
            if ok {
                state.counts.authorized += 1;
            } else {
                state.counts.rejected += 1;
            }
            ok
        };
        if live {
            return mcp.handle(req).await;
        }
        let mut challenge = format!(
            "Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\", scope=\"mcp\"",
            self.base
        );
        if token.is_some() {
            challenge.push_str(", error=\"invalid_token\"");
        }
        let mut response =
            json_response(StatusCode::UNAUTHORIZED, json!({"error": "unauthorized"}));
        if let Ok(value) = challenge.parse() {
            response
                .headers_mut()
                .insert(http::header::WWW_AUTHENTICATE, value);
        }
        response
    }

    fn register(&self, body: String) -> Response<Body> {
        let request: Value = serde_json::from_str(&body).unwrap_or_default();
        let uris: Vec<String> = request["redirect_uris"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|u| u.as_str().map(String::from))
            .collect();
        if uris.is_empty() {
            return oauth_error(StatusCode::BAD_REQUEST, "invalid_redirect_uri");
        }
        let mut state = self.lock();
        state.counts.registrations += 1;
        let client_id = state.fresh("client");
        state.clients.insert(client_id.clone(), uris.clone());
        json_response(
            StatusCode::CREATED,
            json!({
                "client_id": client_id,
                "redirect_uris": uris,
                "client_name": request["client_name"],
                "token_endpoint_auth_method": "none",
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
            }),
        )
    }

    /// Approves at once: redirects back with a code for the PKCE challenge.
    fn authorize(&self, query: &str) -> Response<Body> {
        let q = pairs(query);
        let get = |k: &str| q.get(k).cloned().unwrap_or_default();
        let mut state = self.lock();
        let registered = state
            .clients
            .get(&get("client_id"))
            .is_some_and(|uris| uris.contains(&get("redirect_uri")));
        if !registered || get("response_type") != "code" || get("code_challenge_method") != "S256" {
            return oauth_error(StatusCode::BAD_REQUEST, "invalid_request");
        }
        state.counts.authorizations += 1;
        let code = state.fresh("code");
        state.codes.insert(
            code.clone(),
            Grant {
                client_id: get("client_id"),
                redirect_uri: get("redirect_uri"),
                challenge: get("code_challenge"),
            },
        );
        let mut location = reqwest::Url::parse(&get("redirect_uri")).expect("registered URI");
        location
            .query_pairs_mut()
            .append_pair("code", &code)
            .append_pair("state", &get("state"));
        let mut response = Response::new(Full::new(Bytes::new()).boxed());
        *response.status_mut() = StatusCode::FOUND;
        if let Ok(value) = location.as_str().parse() {
            response.headers_mut().insert(http::header::LOCATION, value);
        }
        response
    }

    fn token(&self, body: &str) -> Response<Body> {
        let form = pairs(body);
        let get = |k: &str| form.get(k).cloned().unwrap_or_default();
        let mut state = self.lock();
        let client_id = match get("grant_type").as_str() {
            "authorization_code" => {
                let Some(grant) = state.codes.remove(&get("code")) else {
                    return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant");
                };
                let digest = sha2::Sha256::digest(get("code_verifier").as_bytes());
                let expected = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest);
                if expected != grant.challenge
                    || grant.redirect_uri != get("redirect_uri")
                    || grant.client_id != get("client_id")
                {
                    return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant");
                }
                state.counts.code_grants += 1;
                grant.client_id
            }
            "refresh_token" => match state.refresh.remove(&get("refresh_token")) {
                Some(client) if client == get("client_id") => {
                    state.counts.refresh_grants += 1;
                    client
                }
                _ => return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant"),
            },
            _ => return oauth_error(StatusCode::BAD_REQUEST, "unsupported_grant_type"),
        };
        let access = state.fresh("access");
        let refresh = state.fresh("refresh");
        let lifetime = Duration::from_secs(state.expires_in);
        state
            .access
            .insert(access.clone(), Instant::now() + lifetime);
        state.refresh.insert(refresh.clone(), client_id);
        json_response(
            StatusCode::OK,
            json!({
                "access_token": access,
                "token_type": "Bearer",
                "expires_in": state.expires_in,
                "refresh_token": refresh,
                "scope": "mcp",
            }),
        )
    }
}

async fn body_text(req: Request<Incoming>) -> String {
    match req.into_body().collect().await {
        Ok(collected) => String::from_utf8_lossy(&collected.to_bytes()).into_owned(),
        Err(_) => String::new(),
    }
}

fn pairs(query: &str) -> HashMap<String, String> {
    reqwest::Url::parse(&format!("http://x/?{query}"))
        .map(|u| u.query_pairs().into_owned().collect())
        .unwrap_or_default()
}

fn json_response(status: StatusCode, value: Value) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(value.to_string())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response.headers_mut().insert(
        http::header::CACHE_CONTROL,
        http::HeaderValue::from_static("no-store"),
    );
    response
}

fn oauth_error(status: StatusCode, error: &str) -> Response<Body> {
    json_response(status, json!({"error": error}))
}
