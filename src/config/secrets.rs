//! Which environment variables hold secrets, by name: the configuration
//! names them (what a project may pass on) and the tools keep them from
//! child processes.

/// Whether a variable's name says it holds a secret (in any case).
pub fn looks_secret(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    const SUFFIXES: [&str; 9] = [
        "_KEY", "_APIKEY", "_TOKEN", "_PAT", "_AUTH", "_PASS", "_PWD", "_DSN", "_CREDS",
    ];
    const PARTS: [&str; 6] = [
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "PASSPHRASE",
        "CREDENTIAL",
        "PRIVATE_KEY",
    ];
    const EXACT: [&str; 4] = ["API_KEY", "APIKEY", "TOKEN", "PASSWORD"];
    SUFFIXES.iter().any(|s| n.ends_with(s))
        || PARTS.iter().any(|p| n.contains(p))
        || EXACT.contains(&n.as_str())
        || names_a_session_or_token(&n)
}

/// The wider net: any `TOKEN` (`TF_TOKEN_*`, `NPM_CONFIG__AUTHTOKEN`) but a
/// tokenizer's, any `SESSION` (`BW_SESSION`, `OP_SESSION_*`) but the
/// desktop's, `JWT`, `WEBHOOK`, connection strings and auth configs.
fn names_a_session_or_token(n: &str) -> bool {
    const PARTS: [&str; 5] = [
        "JWT",
        "WEBHOOK",
        "CONNECTION_STRING",
        "CONNECTIONSTRING",
        "AUTH_CONFIG",
    ];
    let token = n.contains("TOKEN") && !n.contains("TOKENIZER");
    let desktop =
        n.starts_with("XDG_SESSION") || n == "DESKTOP_SESSION" || n.starts_with("DBUS_SESSION");
    let session = n.contains("SESSION") && !desktop;
    token || session || PARTS.iter().any(|p| n.contains(p))
}

/// Whether a value holds a secret whatever its variable is called: an Azure
/// storage connection string's `AccountKey=`, `SharedAccessSignature=`.
pub fn value_looks_secret(value: &str) -> bool {
    ["AccountKey=", "SharedAccessKey=", "SharedAccessSignature="]
        .iter()
        .any(|marker| value.contains(marker))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wider_net_catches_sessions_tokens_and_hooks() {
        for name in [
            "BW_SESSION",
            "OP_SESSION_my_team",
            "TF_TOKEN_app_terraform_io",
            "NPM_CONFIG__AUTHTOKEN",
            "npm_config__authToken",
            "CI_JOB_JWT",
            "CI_JOB_JWT_V2",
            "SLACK_WEBHOOK_URL",
            "DB_CONNECTION_STRING",
            "AZURE_STORAGE_CONNECTIONSTRING",
            "DOCKER_AUTH_CONFIG",
        ] {
            assert!(looks_secret(name), "{name}");
        }
        for name in [
            "TOKENIZERS_PARALLELISM",
            "XDG_SESSION_TYPE",
            "XDG_SESSION_ID",
            "DESKTOP_SESSION",
            "PATH",
        ] {
            assert!(!looks_secret(name), "{name}");
        }
        assert!(value_looks_secret(
            "DefaultEndpointsProtocol=https;AccountKey=abc;"
        ));
        assert!(!value_looks_secret("https://example.com"));
    }
}
