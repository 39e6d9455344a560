use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::*;

/// Serves `response` (head and body) to every connection on 127.0.0.1.
async fn serve(content_type: &'static str, body: Vec<u8>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let body = body.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 4096];
                let mut got = Vec::new();
                while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                    match sock.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => got.extend_from_slice(&buf[..n]),
                    }
                }
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = sock.write_all(head.as_bytes()).await;
                let _ = sock.write_all(&body).await;
            });
        }
    });
    format!("http://{addr}/page")
}

/// A context whose rules name 127.0.0.1, where the test servers listen.
fn ctx() -> (tempfile::TempDir, ToolContext) {
    let dir = tempfile::tempdir().unwrap();
    let mut ctx = ToolContext::new(dir.path().to_path_buf());
    ctx.fetch_hosts = FetchHosts::new(vec!["127.0.0.1".into()]);
    (dir, ctx)
}

/// Answers every request with a redirect to `to`, recording each request.
async fn redirect_to(
    bind: &str,
    to: String,
) -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    let listener = TcpListener::bind(format!("{bind}:0")).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let mut buf = vec![0u8; 4096];
            let n = sock.read(&mut buf).await.unwrap_or(0);
            log.lock()
                .unwrap()
                .push(String::from_utf8_lossy(&buf[..n]).into_owned());
            let head = format!(
                "HTTP/1.1 302 Found\r\nLocation: {to}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
            let _ = sock.write_all(head.as_bytes()).await;
        }
    });
    (format!("http://{addr}/start?token=t"), seen)
}

#[tokio::test]
async fn loopback_needs_a_rule_and_redirects_stay_on_the_approved_host() {
    let url = serve("text/plain", b"BODY-ON-LOOPBACK".to_vec()).await;
    let dir = tempfile::tempdir().unwrap();
    let bare = ToolContext::new(dir.path().to_path_buf());
    let out = FetchTool.run(json!({ "url": url }), &bare).await;
    assert!(out.is_error, "{}", out.text_content());
    assert!(
        out.text_content().contains("fetch(127.0.0.1)"),
        "{}",
        out.text_content()
    );
    assert!(!out.text_content().contains("BODY-ON-LOOPBACK"));
    // localhost by name resolves to loopback: refused without a rule too.
    let by_name = url.replace("127.0.0.1", "localhost");
    let out = FetchTool.run(json!({ "url": by_name }), &bare).await;
    assert!(
        out.is_error && !out.text_content().contains("BODY-ON-LOOPBACK"),
        "{}",
        out.text_content()
    );

    // Allowed: 127.0.0.1. The redirect goes to 127.0.0.2, which no rule names.
    let (_d, ctx) = ctx();
    let (other, other_seen) = redirect_to("127.0.0.2", "http://127.0.0.1:9/".into()).await;
    let (start, seen) = redirect_to("127.0.0.1", other).await;
    let out = FetchTool.run(json!({ "url": start }), &ctx).await;
    assert!(out.is_error, "{}", out.text_content());
    assert!(
        out.text_content().contains("127.0.0.2"),
        "{}",
        out.text_content()
    );
    assert!(
        other_seen.lock().unwrap().is_empty(),
        "followed to another host"
    );
    assert_eq!(seen.lock().unwrap().len(), 1);
    assert!(
        !seen.lock().unwrap()[0]
            .to_ascii_lowercase()
            .contains("referer")
    );
}

const PAGE: &str = "<html><body><h1>Title</h1><p>Some <b>bold</b> text.</p></body></html>";

#[tokio::test]
async fn html_becomes_markdown_or_text() {
    let (_d, ctx) = ctx();
    let url = serve("text/html; charset=utf-8", PAGE.as_bytes().to_vec()).await;
    let out = FetchTool.run(json!({"url": url}), &ctx).await;
    assert!(!out.is_error, "{}", out.text_content());
    let text = out.text_content();
    assert!(text.contains("# Title"), "{text}");
    assert!(text.contains("**bold**"), "{text}");

    let out = FetchTool
        .run(json!({"url": url, "format": "text"}), &ctx)
        .await;
    assert!(
        out.text_content().contains("Some bold text."),
        "{}",
        out.text_content()
    );
    let out = FetchTool
        .run(json!({"url": url, "format": "html"}), &ctx)
        .await;
    assert!(out.text_content().contains("<h1>Title</h1>"));
}

#[tokio::test]
async fn refuses_other_schemes_and_binary() {
    let (_d, ctx) = ctx();
    let out = FetchTool
        .run(json!({"url": "file:///etc/passwd"}), &ctx)
        .await;
    assert!(out.is_error);
    assert!(out.text_content().contains("only reads http"));
    assert!(
        FetchTool
            .preview(&json!({"url": "ftp://x/y"}), &ctx)
            .await
            .is_err()
    );
    let url = serve("image/png", vec![0x89, b'P', b'N', b'G', 0, 0]).await;
    let out = FetchTool.run(json!({"url": url}), &ctx).await;
    assert!(out.is_error);
    assert!(out.text_content().contains("image/png"));
}

#[tokio::test]
async fn caps_the_body_and_the_output() {
    let (_d, ctx) = ctx();
    let url = serve("text/plain", vec![b'a'; MAX_BODY + 1000]).await;
    let out = FetchTool.run(json!({"url": url}), &ctx).await;
    assert!(!out.is_error);
    let text = out.text_content();
    assert!(
        text.contains("the body was cut at 5 MB"),
        "{}",
        &text[..300]
    );
    assert!(text.contains("[output cut:"));
    assert!(text.chars().count() < MAX_OUTPUT_CHARS + 500);
}

#[test]
fn preview_is_the_url() {
    let args = Args::parse(&json!({"url": "https://example.com/a"})).unwrap();
    assert_eq!(args.format, Format::Markdown);
    assert!(Args::parse(&json!({"url": "https://e.com", "format": "pdf"})).is_err());
    assert_eq!(classify("", b"<!DOCTYPE html><html>"), Kind::Html);
    assert_eq!(classify("application/json", b"{}"), Kind::Text);
    assert_eq!(
        classify("application/octet-stream", b"\0\x01"),
        Kind::Binary
    );
}
