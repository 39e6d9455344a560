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
}
