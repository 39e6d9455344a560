//! `fetch`: reads a web page over http(s) and hands it to the model as
//! markdown, plain text or raw HTML.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};

mod guard;
pub use guard::Named as FetchHosts;

use super::{Preview, Tool, ToolContext, ToolOutput, opt_str_arg, str_arg};

const TIMEOUT: Duration = Duration::from_secs(30);
const MAX_REDIRECTS: usize = 5;
const MAX_BODY: usize = 5 * 1024 * 1024;
const MAX_OUTPUT_CHARS: usize = 100_000;
const TEXT_WIDTH: usize = 100;

pub struct FetchTool;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Format {
    Markdown,
    Text,
    Html,
}

#[derive(Debug, PartialEq)]
enum Kind {
    Html,
    Text,
    Binary,
}

struct Args {
    url: reqwest::Url,
    format: Format,
}

impl Args {
    fn parse(input: &Value) -> Result<Args, String> {
        let raw = str_arg(input, "url")?.trim();
        let url = reqwest::Url::parse(raw).map_err(|e| {
            format!("`{raw}` is not a valid URL ({e}); give a full http:// or https:// URL")
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!(
                "fetch only reads http:// and https:// URLs, not {}:; use view for local files",
                url.scheme()
            ));
        }
        let format = match opt_str_arg(input, "format")? {
            None | Some("markdown") => Format::Markdown,
            Some("text") => Format::Text,
            Some("html") => Format::Html,
            Some(other) => {
                return Err(format!(
                    "`format` must be markdown, text or html, not `{other}`"
                ));
            }
        };
        Ok(Args { url, format })
    }
}

fn classify(content_type: &str, body: &[u8]) -> Kind {
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if essence == "text/html" || essence == "application/xhtml+xml" {
        return Kind::Html;
    }
    let texty = essence.starts_with("text/")
        || essence.ends_with("+json")
        || essence.ends_with("+xml")
        || [
            "application/json",
            "application/xml",
            "application/javascript",
            "application/x-javascript",
            "application/ecmascript",
            "application/yaml",
            "application/x-yaml",
            "application/toml",
            "application/x-sh",
            "application/sql",
            "application/graphql",
        ]
        .contains(&essence.as_str());
    if texty {
        return Kind::Text;
    }
    if essence.is_empty() || essence == "application/octet-stream" {
        let head = &body[..body.len().min(8192)];
        // A multi-byte character cut at the sniff boundary is still text.
        let utf8 = match std::str::from_utf8(head) {
            Ok(_) => true,
            Err(e) => e.error_len().is_none(),
        };
        if !head.contains(&0) && utf8 {
            let lower = String::from_utf8_lossy(head).to_ascii_lowercase();
            return if lower.contains("<html") || lower.contains("<!doctype html") {
                Kind::Html
            } else {
                Kind::Text
            };
        }
    }
    Kind::Binary
}

fn cap_chars(text: String, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text,
        Some((i, _)) => {
            let rest = text[i..].chars().count();
            format!(
                "{}\n\n[output cut: {rest} more characters not shown]",
                &text[..i]
            )
        }
    }
}

async fn fetch(args: Args, ctx: &ToolContext) -> Result<(bool, String), String> {
    let named = ctx.fetch_hosts.clone();
    let host = args.url.host_str().unwrap_or("").to_ascii_lowercase();
    if let Some(why) = guard::refuse_literal(&host, &named) {
        return Err(why);
    }
    let client = reqwest::Client::builder()
        .redirect(guard::redirects(host, named.clone(), MAX_REDIRECTS))
        .referer(false)
        .dns_resolver(guard::Resolver { named })
        .timeout(TIMEOUT)
        .user_agent(concat!("cairn/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| format!("cannot set up the HTTP client: {e}"))?;
    let request = client.get(args.url.clone()).send();
    let mut response = tokio::select! {
        r = request => r.map_err(|e| describe(&e, &args.url))?,
        _ = ctx.cancel.cancelled() => return Err("cancelled".into()),
    };
    let status = response.status();
    let final_url = response.url().to_string();
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let mut body = Vec::new();
    let mut cut = false;
    loop {
        let chunk = tokio::select! {
            c = response.chunk() => c.map_err(|e| describe(&e, &args.url))?,
            _ = ctx.cancel.cancelled() => return Err("cancelled".into()),
        };
        let Some(chunk) = chunk else { break };
        let room = MAX_BODY - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            cut = true;
            break;
        }
        body.extend_from_slice(&chunk);
    }
    let kind = classify(&content_type, &body);
    let shown_type = if content_type.is_empty() {
        "no content type"
    } else {
        content_type.as_str()
    };
    if kind == Kind::Binary {
        return Err(format!(
            "{final_url} returned {shown_type}, which is binary; fetch only shows text and HTML"
        ));
    }
    let text = match (kind, args.format) {
        (Kind::Html, Format::Markdown) => {
            htmd::convert(&String::from_utf8_lossy(&body)).map_err(|e| {
                format!("cannot convert the page to markdown: {e}; try format text or html")
            })?
        }
        (Kind::Html, Format::Text) => html2text::config::plain_no_decorate()
            .string_from_read(body.as_slice(), TEXT_WIDTH)
            .map_err(|e| {
                format!("cannot convert the page to text: {e}; try format markdown or html")
            })?,
        _ => String::from_utf8_lossy(&body).into_owned(),
    };
    let mut head = format!("{final_url} ({shown_type}, HTTP {})", status.as_u16());
    if cut {
        head.push_str(&format!(
            "\n[the body was cut at {} MB; the rest was not downloaded]",
            MAX_BODY / (1024 * 1024)
        ));
    }
    let out = format!("{head}\n\n{}", cap_chars(text, MAX_OUTPUT_CHARS));
    Ok((status.is_success(), out))
}

fn describe(e: &reqwest::Error, url: &reqwest::Url) -> String {
    if e.is_timeout() {
        format!("{url} did not answer within {} s", TIMEOUT.as_secs())
    } else if let Some(why) = cause(e).filter(|_| e.is_redirect() || e.is_connect()) {
        format!("fetching {url} stopped: {why}")
    } else {
        format!("fetching {url} failed: {e}")
    }
}

/// The innermost cause of an error: the guard's own words.
fn cause(e: &reqwest::Error) -> Option<String> {
    let mut source = std::error::Error::source(e)?;
    while let Some(next) = source.source() {
        source = next;
    }
    Some(source.to_string())
}

#[async_trait]
impl Tool for FetchTool {
    fn name(&self) -> &str {
        "fetch"
    }
    fn description(&self) -> &str {
        include_str!("../../../assets/tools/fetch.md")
    }
    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "url": {
                    "type": "string",
                    "description": "The http:// or https:// URL to read."
                },
                "format": {
                    "type": "string",
                    "enum": ["markdown", "text", "html"],
                    "description": "How to return an HTML page: markdown (default), plain text, or the raw html."
                }
            },
            "required": ["url"],
            "additionalProperties": false
        })
    }
    fn read_only(&self) -> bool {
        false
    }
    fn summary(&self, input: &Value) -> String {
        format!(
            "fetch {}",
            input.get("url").and_then(Value::as_str).unwrap_or("")
        )
    }
    async fn preview(&self, input: &Value, _ctx: &ToolContext) -> Result<Option<Preview>, String> {
        let args = Args::parse(input)?;
        Ok(Some(Preview::Url {
            url: args.url.to_string(),
        }))
    }
    async fn run(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        let args = match Args::parse(&input) {
            Ok(a) => a,
            Err(e) => return ToolOutput::error(e),
        };
        match fetch(args, ctx).await {
            Ok((true, text)) => ToolOutput::text(text),
            Ok((false, text)) => ToolOutput::error(text),
            Err(e) => ToolOutput::error(e),
        }
    }
}

#[cfg(test)]
mod tests;
