//! The OAuth-protected test MCP server as a program, for trying
//! `cairn mcp login` by hand:
//!
//!     cargo run --example oauth_mcp -- 127.0.0.1:8788
//!     cairn mcp add docs --url http://127.0.0.1:8788/mcp
//!     cairn mcp login docs
//!
//! Its authorization page approves at once and sends the browser back to
//! cairn. An optional second argument sets the access tokens' lifetime in
//! seconds (default 3600), to watch them being refreshed.

#[path = "../tests/support/mcp_server.rs"]
#[allow(dead_code)]
mod mcp_server;
#[path = "../tests/support/oauth_server.rs"]
mod oauth_server;

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let addr = args.next().unwrap_or_else(|| "127.0.0.1:0".to_string());
    let stop = tokio_util::sync::CancellationToken::new();
    let server = match oauth_server::OAuthServer::start_on(&addr, stop.clone()).await {
        Ok(server) => server,
        Err(e) => {
            eprintln!("cannot listen on {addr}: {e}");
            std::process::exit(1);
        }
    };
    if let Some(secs) = args.next().and_then(|s| s.parse().ok()) {
        server.set_expires_in(secs);
    }
    println!("OAuth-protected MCP server at {}", server.mcp_url());
    let _ = tokio::signal::ctrl_c().await;
    stop.cancel();
    println!("{:?}", server.counts());
}
