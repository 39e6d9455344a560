//! Opening an address in the person's browser: the authorization page of
//! `cairn mcp login`, and the page a server's URL request (elicitation)
//! names once the person agreed. `CAIRN_BROWSER` names the command to use
//! (the address is added as its last argument), or `none` for none;
//! otherwise the system's own way to open a web page.

use std::process::Stdio;

/// Environment variable naming the command that opens a web page, or `none`.
pub const BROWSER_ENV: &str = "CAIRN_BROWSER";

/// Opens `address`; `Ok(false)` when the person asked for no browser. The
/// browser's output never reaches the terminal.
pub fn open(address: &str) -> Result<bool, String> {
    match std::env::var(BROWSER_ENV) {
        Ok(command) => {
            let mut words = command.split_whitespace();
            let Some(program) = words.next().filter(|p| *p != "none") else {
                return Ok(false);
            };
            let mut cmd = std::process::Command::new(program);
            crate::sandbox::own_path::apply(&mut cmd);
            cmd.args(words)
                .arg(address)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .map(|_| true)
                .map_err(|e| format!("`{program}` did not start ({e})"))
        }
        // The opener is found on cairn's own PATH, never in a folder a
        // session's commands can write (the browser crate would look on
        // the PATH cairn was started with).
        Err(_) if cfg!(target_os = "linux") => {
            let Some(opener) = crate::sandbox::own_path::find("xdg-open") else {
                return Err(format!(
                    "no `xdg-open` was found to open it; set {BROWSER_ENV} to a browser command"
                ));
            };
            let mut cmd = std::process::Command::new(opener);
            crate::sandbox::own_path::apply(&mut cmd);
            cmd.arg(address)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .map(|_| true)
                .map_err(|e| format!("`xdg-open` did not start ({e})"))
        }
        Err(_) => webbrowser::open(address)
            .map(|_| true)
            .map_err(|e| e.to_string()),
    }
}

/// `address` when it is a web address a server may send the person to:
/// `http` or `https` with a host, nothing else (no `file:`, no custom
/// schemes, no control characters).
pub fn web_address(address: &str) -> Option<String> {
    let url = reqwest::Url::parse(address.trim()).ok()?;
    let web = matches!(url.scheme(), "http" | "https") && url.host_str().is_some();
    let clean = !url.as_str().chars().any(char::is_control);
    (web && clean).then(|| url.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_web_addresses_are_opened() {
        assert_eq!(
            web_address("https://example.com/verify?x=1").as_deref(),
            Some("https://example.com/verify?x=1")
        );
        assert!(web_address("file:///etc/passwd").is_none());
        assert!(web_address("javascript:alert(1)").is_none());
        assert!(web_address("vscode://open").is_none());
        assert!(web_address("not a url").is_none());
        // Parsing percent-encodes what a terminal would act on.
        let odd = web_address("https://example.com/\u{1b}[2J").unwrap_or_default();
        assert!(!odd.contains('\u{1b}'), "{odd}");
    }
}
