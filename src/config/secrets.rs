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
    // `AUTH`, `X_AUTH`, `BASIC_AUTH_USER`… but not git's author or an
    // agent's socket (`SSH_AUTH_SOCK`, withheld as a socket).
    let auth = n.contains("AUTH") && !n.contains("AUTHOR") && !n.ends_with("_SOCK");
    // `PGPASS`, `SSHPASS` (not `BYPASS`, not a program like `GIT_ASKPASS`),
    // cookies and bearer headers.
    let pass = n.ends_with("PASS") && !n.ends_with("BYPASS") && !n.ends_with("ASKPASS");
    let header = n.contains("COOKIE") || n.contains("BEARER");
    if auth || pass || header {
        return true;
    }
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
        || value.contains("-----BEGIN") && value.contains("PRIVATE KEY")
        || has_token_shape(value.trim())
}

/// The shapes of the tokens services hand out, which say what they are
/// whatever variable holds them: a prefix and at least so many random
/// characters after it.
fn has_token_shape(v: &str) -> bool {
    const PREFIXES: &[(&str, usize)] = &[
        ("ghp_", 30),
        ("gho_", 30),
        ("ghu_", 30),
        ("ghs_", 30),
        ("ghr_", 30),
        ("github_pat_", 30),
        ("glpat-", 20),
        ("sk-ant-", 20),
        ("sk-proj-", 20),
        ("sk-", 32),
        ("sk_live_", 20),
        ("rk_live_", 20),
        ("xoxb-", 20),
        ("xoxp-", 20),
        ("xoxa-", 20),
        ("xoxs-", 20),
        ("xapp-", 20),
        ("ops_", 30),
        ("npm_", 30),
        ("hf_", 30),
        ("pypi-", 50),
        ("AIza", 30),
        ("shpat_", 30),
    ];
    let random = |rest: &str, at_least: usize| {
        rest.len() >= at_least
            && rest
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '='))
    };
    if PREFIXES
        .iter()
        .any(|(p, n)| v.strip_prefix(p).is_some_and(|rest| random(rest, *n)))
    {
        return true;
    }
    // AWS access key ids.
    let aws = (v.starts_with("AKIA") || v.starts_with("ASIA"))
        && v.len() == 20
        && v.chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit());
    // A JSON Web Token: three base64url parts, the first a JSON object.
    let jwt = v.starts_with("eyJ")
        && v.split('.').count() == 3
        && v.len() > 40
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '='));
    aws || jwt
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
        for name in ["AUTH", "X_AUTH", "COOKIE", "BEARER", "PGPASS", "SSHPASS"] {
            assert!(looks_secret(name), "{name}");
        }
        for name in [
            "GIT_AUTHOR_NAME",
            "GIT_AUTHOR_EMAIL",
            "NO_BYPASS",
            "HOME",
            "LANG",
        ] {
            assert!(!looks_secret(name), "{name}");
        }
        for value in [
            "ghp_0123456789abcdefghijABCDEFGHIJ0123",
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
            "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789",
            "AKIAIOSFODNN7EXAMPLE",
            "glpat-abcdefghij0123456789",
            "xoxb-123456789012-1234567890123-abcdefghijklmnop",
            "ops_eyJhbGciOiJIUzI1NiJ9abcdefghijklmnopqrstuvwxyz",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----",
        ] {
            assert!(value_looks_secret(value), "{value}");
        }
        for value in [
            "/usr/local/bin:/usr/bin",
            "en_US.UTF-8",
            "xterm-256color",
            "sk-short",
            "ghp_",
            "AKIA",
            "eyJ",
            "/home/me/.cargo",
        ] {
            assert!(!value_looks_secret(value), "{value}");
        }
    }
}
