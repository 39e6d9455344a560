//! The loopback redirect listener: the authorization server sends the
//! browser back to `http://127.0.0.1:PORT/callback?code=…&state=…`, and this
//! reads that one request and answers it with a short page.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const PATH: &str = "/callback";
/// Longest request head read from the browser.
const MAX_HEAD: usize = 16 * 1024;
/// How long one connection may take to send its request.
const READ_LIMIT: Duration = Duration::from_secs(10);

/// A listener on 127.0.0.1, on a port the system picks.
pub struct Loopback {
    listener: TcpListener,
    port: u16,
}

/// The browser's request to the redirect URI, waiting for its answer.
pub struct Callback {
    /// The full redirect URL, with its query.
    pub url: String,
    stream: TcpStream,
}

impl Loopback {
    pub async fn bind() -> std::io::Result<Loopback> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let port = listener.local_addr()?.port();
        Ok(Loopback { listener, port })
    }

    /// The redirect URI to register.
    pub fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}{PATH}", self.port)
    }

    /// Waits for the browser to come back to the redirect URI with this
    /// login's `state`. Other requests (a favicon, a stray probe, a
    /// callback forged by another page or process, which could otherwise
    /// end the login with an error of its choosing) are answered and
    /// ignored.
    pub async fn wait(&self, state: &str) -> std::io::Result<Callback> {
        loop {
            let (mut stream, _) = self.listener.accept().await?;
            let target = match tokio::time::timeout(READ_LIMIT, read_target(&mut stream)).await {
                Ok(Some(target)) => target,
                _ => continue,
            };
            let path = target.split('?').next().unwrap_or_default();
            if path == PATH && state_of(&target).as_deref() == Some(state) {
                return Ok(Callback {
                    url: format!("http://127.0.0.1:{}{target}", self.port),
                    stream,
                });
            }
            let _ = respond(&mut stream, "404 Not Found", "Not found", "").await;
        }
    }
}

impl Callback {
    /// Answers the browser: whether the login worked, and what to do next.
    pub async fn reply(mut self, ok: bool, message: &str) {
        let (status, title) = if ok {
            ("200 OK", "cairn: logged in")
        } else {
            ("400 Bad Request", "cairn: login failed")
        };
        let _ = respond(&mut self.stream, status, title, message).await;
    }
}

/// The `state` parameter of a request target or an address.
pub fn state_of(target: &str) -> Option<String> {
    let query = target.split_once('?')?.1;
    let url = reqwest::Url::parse(&format!("http://127.0.0.1/?{query}")).ok()?;
    url.query_pairs()
        .find(|(k, _)| k == "state")
        .map(|(_, v)| v.into_owned())
}

/// The request target of a `GET` request, once its head has arrived.
async fn read_target(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut buf = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 || head.len() + n > MAX_HEAD {
            return None;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let head = String::from_utf8_lossy(&head);
    let mut parts = head.lines().next()?.split_whitespace();
    match (parts.next(), parts.next()) {
        (Some("GET"), Some(target)) if target.starts_with('/') => Some(target.to_string()),
        _ => None,
    }
}

async fn respond(
    stream: &mut TcpStream,
    status: &str,
    title: &str,
    message: &str,
) -> std::io::Result<()> {
    let body = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>{title}</title></head>\
         <body><h1>{title}</h1><p>{}</p></body></html>",
        escape_html(message)
    );
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(response.as_bytes()).await?;
    stream.shutdown().await
}

fn escape_html(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn get(port: u16, target: &str) -> String {
        let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let req = format!("GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        s.write_all(req.as_bytes()).await.unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).await.unwrap();
        out
    }

    #[tokio::test]
    async fn only_the_callback_path_is_taken_and_answered() {
        let lb = Loopback::bind().await.unwrap();
        let port = lb.port;
        assert_eq!(
            lb.redirect_uri(),
            format!("http://127.0.0.1:{port}/callback")
        );
        let browser = tokio::spawn(async move {
            let stray = get(port, "/favicon.ico").await;
            let forged = get(port, "/callback?error=access_denied&error_description=x").await;
            let other = get(port, "/callback?code=c0&state=s0").await;
            let page = get(port, "/callback?code=c1&state=s1").await;
            assert!(forged.starts_with("HTTP/1.1 404"), "{forged}");
            assert!(other.starts_with("HTTP/1.1 404"), "{other}");
            (stray, page)
        });
        let cb = lb.wait("s1").await.unwrap();
        assert_eq!(
            cb.url,
            format!("http://127.0.0.1:{port}/callback?code=c1&state=s1")
        );
        cb.reply(true, "You can close this tab <now>.").await;
        let (stray, page) = browser.await.unwrap();
        assert!(stray.starts_with("HTTP/1.1 404"), "{stray}");
        assert!(page.starts_with("HTTP/1.1 200"), "{page}");
        assert!(page.contains("close this tab &lt;now&gt;"), "{page}");
    }
}
