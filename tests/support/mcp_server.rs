//! A small MCP server for cairn's tests, speaking stdio. Each tool exercises
//! one behaviour of the client: plain text, error results, progress,
//! `list_changed`, a crash, images and a call slow enough to cancel.

// Roots are deprecated by the newest protocol revision, but clients and
// servers of the earlier ones use them, and cairn offers its workspace.
#![allow(deprecated)]

use std::io::Write;
use std::sync::Mutex;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ElicitRequestParams,
    GetPromptRequestParams, GetPromptResponse, GetPromptResult, ListPromptsResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, ResourceContents,
    ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

/// A 1×1 PNG.
pub const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/// Set to a file path: the server appends a line there when a call is
/// cancelled, so a test can see the cancellation reached it.
pub const MARKER_ENV: &str = "CAIRN_TEST_MCP_MARKER";

/// Set to a file path: the server writes its process id there on start.
pub const PIDFILE_ENV: &str = "CAIRN_TEST_MCP_PIDFILE";

/// The one resource the server offers, and its text.
pub const RESOURCE_URI: &str = "cairn-test://notes";
pub const RESOURCE_TEXT: &str = "The notes say: resources work.";
/// A second resource: the 1×1 PNG, as a blob.
pub const PIXEL_URI: &str = "cairn-test://pixel";

pub struct TestServer {
    extra_tool: Mutex<bool>,
}

fn tool(name: &str, description: &str, schema: Value) -> Tool {
    serde_json::from_value(json!({
        "name": name,
        "description": description,
        "inputSchema": schema,
    }))
    .expect("static tool definition")
}

fn no_args() -> Value {
    json!({"type": "object", "properties": {}})
}

fn text_result(text: impl Into<String>) -> CallToolResponse {
    CallToolResult::success(vec![ContentBlock::text(text)]).into()
}

impl TestServer {
    pub fn new() -> Self {
        TestServer {
            extra_tool: Mutex::new(false),
        }
    }

    fn tools(&self) -> Vec<Tool> {
        let mut echo = tool(
            "echo",
            "Echoes the text back.",
            json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        );
        echo.annotations = Some(ToolAnnotations::new().read_only(true));
        let mut crash = tool("crash", "Makes the server exit.", no_args());
        crash.annotations = Some(ToolAnnotations::new().read_only(false).destructive(true));
        let mut tools = vec![
            echo,
            tool("fail", "Always answers with an error result.", no_args()),
            tool(
                "progress",
                "Reports progress, then answers.",
                json!({"type": "object", "properties": {"steps": {"type": "integer"}}}),
            ),
            tool("add_tool", "Adds the `extra` tool.", no_args()),
            crash,
            tool(
                "header",
                "Tells the value of an HTTP request header (streamable HTTP only).",
                json!({"type": "object", "properties": {"name": {"type": "string"}}}),
            ),
            tool("image", "Returns a tiny image.", no_args()),
            tool("roots", "Tells the client's roots.", no_args()),
            tool(
                "ask",
                "Asks the person who they are; with `url`, asks them to open that page; with `pick`, where to deploy.",
                json!({"type": "object", "properties": {"url": {"type": "string"}}}),
            ),
            tool(
                "slow",
                "Answers after `secs` seconds.",
                json!({"type": "object", "properties": {"secs": {"type": "number"}}}),
            ),
        ];
        if *self.extra_tool.lock().unwrap_or_else(|e| e.into_inner()) {
            tools.push(tool("extra", "Appeared later.", no_args()));
        }
        tools
    }
}

impl Default for TestServer {
    fn default() -> Self {
        Self::new()
    }
}

impl ServerHandler for TestServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_resources()
                .enable_prompts()
                .build(),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let greet = serde_json::from_value(json!({
            "name": "greet",
            "description": "Greets someone.",
            "arguments": [{"name": "name", "required": true}, {"name": "mood"}],
        }))
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(ListPromptsResult::with_all_items(vec![greet]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let arg = |k: &str| {
            args.get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        if request.name != "greet" || arg("name").is_empty() {
            return Err(ErrorData::invalid_params("greet needs a name", None));
        }
        let mood = if arg("mood").is_empty() {
            "warmly".to_string()
        } else {
            arg("mood")
        };
        let message = serde_json::from_value(json!({
            "role": "user",
            "content": {"type": "text", "text": format!("Say hello to {}, {mood}.", arg("name"))},
        }))
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(GetPromptResult::new(vec![message]).into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let notes = serde_json::from_value(json!({
            "uri": RESOURCE_URI,
            "name": "notes",
            "mimeType": "text/plain",
            "description": "The test server's notes.",
        }))
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let pixel = serde_json::from_value(json!({
            "uri": PIXEL_URI,
            "name": "pixel",
            "mimeType": "image/png",
        }))
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(ListResourcesResult::with_all_items(vec![notes, pixel]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if request.uri == PIXEL_URI {
            let blob = ResourceContents::blob(PNG, PIXEL_URI).with_mime_type("image/png");
            return Ok(ReadResourceResult::new(vec![blob]).into());
        }
        if request.uri != RESOURCE_URI {
            return Err(ErrorData::resource_not_found(
                format!("no resource {}", request.uri),
                None,
            ));
        }
        Ok(
            ReadResourceResult::new(vec![ResourceContents::text(RESOURCE_TEXT, RESOURCE_URI)])
                .into(),
        )
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        match request.name.as_ref() {
            "echo" => {
                let text = args.get("text").and_then(Value::as_str).unwrap_or("");
                Ok(text_result(format!("echo: {text}")))
            }
            "fail" => {
                Ok(CallToolResult::error(vec![ContentBlock::text("something went wrong")]).into())
            }
            "progress" => {
                let steps = args.get("steps").and_then(Value::as_u64).unwrap_or(3);
                if let Some(token) = context.meta.get_progress_token() {
                    for step in 1..=steps {
                        let note = ProgressNotificationParam::new(token.clone(), step as f64)
                            .with_total(steps as f64)
                            .with_message(format!("step {step}"));
                        let _ = context.peer.notify_progress(note).await;
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                }
                Ok(text_result("progress done"))
            }
            "add_tool" => {
                *self.extra_tool.lock().unwrap_or_else(|e| e.into_inner()) = true;
                let _ = context.peer.notify_tool_list_changed().await;
                Ok(text_result("added"))
            }
            "extra" => Ok(text_result("extra tool here")),
            "ask" if args.get("url").is_some() => {
                let params = ElicitRequestParams::UrlElicitationParams {
                    meta: None,
                    message: "Confirm your account on the web.".into(),
                    url: args["url"].as_str().unwrap_or_default().to_string(),
                    elicitation_id: "e-1".into(),
                };
                Ok(text_result(
                    match context.peer.create_elicitation(params).await {
                        Ok(r) => format!("answer: {:?}", r.action),
                        Err(e) => format!("elicitation failed: {e}"),
                    },
                ))
            }
            "ask" if args.get("pick").is_some() => {
                let schema = serde_json::from_value(json!({"type": "object", "properties": {
                    "target": {"type": "string", "title": "Target", "enum": ["staging", "production"]}
                }, "required": ["target"]}))
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                let params = ElicitRequestParams::FormElicitationParams {
                    meta: None,
                    message: "Where to deploy?".into(),
                    requested_schema: schema,
                };
                Ok(text_result(
                    match context.peer.create_elicitation(params).await {
                        Ok(r) => format!(
                            "answer: {:?} {}",
                            r.action,
                            r.content.map(|c| c.to_string()).unwrap_or_default()
                        ),
                        Err(e) => format!("elicitation failed: {e}"),
                    },
                ))
            }
            "ask" => {
                // From text, so the fields keep this order on the wire
                // (neither by name nor required-first). With `many`, two
                // multiple choices as the 2025-11 revision writes them.
                let many = r#"{"type": "object", "properties": {
                        "instruments": {"type": "array", "title": "Instruments",
                            "minItems": 1, "maxItems": 2,
                            "items": {"anyOf": [
                                {"const": "gtr", "title": "Guitar"},
                                {"const": "pno", "title": "Piano"},
                                {"const": "drm", "title": "Drums"}]}},
                        "genres": {"type": "array", "items": {"type": "string", "enum": ["jazz", "rock"]}}
                    }, "required": ["instruments"]}"#;
                let text = if args.get("many").is_some() {
                    many
                } else {
                    r#"{"type": "object", "properties": {
                        "name": {"type": "string", "title": "Your name"},
                        "mood": {"type": "string"},
                        "count": {"type": "integer", "description": "How many?"},
                        "hero": {"type": "string", "oneOf": [
                            {"const": "hero-1", "title": "Ada Lovelace"},
                            {"const": "hero-2", "title": "Grace Hopper"}]}
                    }, "required": ["name", "hero"]}"#
                };
                let schema = serde_json::from_str(text)
                    .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                let params = ElicitRequestParams::FormElicitationParams {
                    meta: None,
                    message: "Who is asking?".into(),
                    requested_schema: schema,
                };
                Ok(text_result(
                    match context.peer.create_elicitation(params).await {
                        Ok(r) => format!(
                            "answer: {:?} {}",
                            r.action,
                            r.content.map(|c| c.to_string()).unwrap_or_default()
                        ),
                        Err(e) => format!("elicitation failed: {e}"),
                    },
                ))
            }
            "roots" => match context.peer.list_roots().await {
                Ok(result) => {
                    let uris: Vec<String> = result.roots.into_iter().map(|r| r.uri).collect();
                    Ok(text_result(format!("roots: {}", uris.join(" "))))
                }
                Err(e) => Ok(text_result(format!("no roots: {e}"))),
            },
            "header" => {
                let name = args.get("name").and_then(Value::as_str).unwrap_or("");
                let value = context
                    .extensions
                    .get::<http::request::Parts>()
                    .and_then(|parts| parts.headers.get(name))
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("(none)");
                Ok(text_result(value.to_string()))
            }
            "crash" => {
                eprintln!("fatal: crashing on purpose");
                let _ = std::io::stderr().flush();
                std::process::exit(3);
            }
            "image" => Ok(CallToolResult::success(vec![
                ContentBlock::text("a tiny image"),
                ContentBlock::image(PNG, "image/png"),
            ])
            .into()),
            "slow" => {
                let secs = args.get("secs").and_then(Value::as_f64).unwrap_or(30.0);
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_secs_f64(secs)) => Ok(text_result("slow done")),
                    _ = context.ct.cancelled() => {
                        if let Ok(path) = std::env::var(MARKER_ENV) {
                            let _ = std::fs::OpenOptions::new()
                                .create(true)
                                .append(true)
                                .open(path)
                                .and_then(|mut f| writeln!(f, "cancelled"));
                        }
                        Ok(text_result("cancelled"))
                    }
                }
            }
            other => Err(ErrorData::invalid_params(
                format!("no tool named {other}"),
                None,
            )),
        }
    }
}

/// Serves on stdin/stdout until the client goes away.
pub async fn serve_stdio() {
    eprintln!("test server starting");
    if let Ok(path) = std::env::var(PIDFILE_ENV) {
        let _ = std::fs::write(path, std::process::id().to_string());
    }
    match TestServer::new().serve(rmcp::transport::stdio()).await {
        Ok(service) => {
            let _ = service.waiting().await;
        }
        Err(e) => eprintln!("test server failed to start: {e}"),
    }
}

#[allow(dead_code)] // not every test binary serves HTTP
/// Serves over streamable HTTP on 127.0.0.1 until `stop` is cancelled;
/// returns the endpoint URL.
pub async fn serve_http(stop: tokio_util::sync::CancellationToken) -> std::io::Result<String> {
    use hyper_util::rt::TokioIo;
    use hyper_util::service::TowerToHyperService;
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let mut config = StreamableHttpServerConfig::default();
    config.cancellation_token = stop.child_token();
    let service = StreamableHttpService::new(
        || Ok(TestServer::new()),
        std::sync::Arc::new(LocalSessionManager::default()),
        config,
    );
    tokio::spawn(async move {
        loop {
            let stream = tokio::select! {
                _ = stop.cancelled() => return,
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => stream,
                    Err(_) => continue,
                },
            };
            let svc = TowerToHyperService::new(service.clone());
            let stop = stop.clone();
            tokio::spawn(async move {
                let conn = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc);
                tokio::select! {
                    _ = conn => {}
                    _ = stop.cancelled() => {}
                }
            });
        }
    });
    Ok(format!("http://{addr}/mcp"))
}
