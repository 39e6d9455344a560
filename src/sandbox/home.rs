//! What commands may read under the home directory: nothing but a short,
//! tested allow-list of toolchain and configuration paths, read-only.
//!
//! Each entry is there because a toolchain a person runs in a project
//! reads it (tested in `sandbox::tests::toolchains`): rustup and cargo
//! live in `~/.cargo` and `~/.rustup`, pyenv and nvm install interpreters
//! under home, git reads `~/.gitconfig`. Secrets that lie inside an
//! allowed directory stay denied ([`SECRETS`]). Shell start-up files,
//! `~/.npmrc`, `~/.cache` and the rest of home are not readable; a person
//! adds what else their tools need with `[sandbox] read`.

use std::path::{Path, PathBuf};

/// Readable under home, relative to it.
pub const ALLOW: &[&str] = &[
    ".cargo",
    ".rustup",
    ".pyenv",
    ".nvm",
    ".volta",
    ".bun",
    ".deno",
    ".rbenv",
    ".sdkman",
    ".local/bin",
    ".local/lib",
    ".local/share/uv/python",
    ".gitconfig",
    ".gitignore_global",
    ".config/git",
    ".terminfo",
];

/// Configuration files on the allow-list that may hold a credential among
/// settings toolchains need: a token in a URL (`url.<base>.insteadOf`,
/// a remote), an `http.extraHeader`, a cargo registry `token`. Where one
/// does, commands read a copy with those lines taken out (bubblewrap) or
/// not the file at all (Landlock cannot put a copy in its place).
pub const CONFIG_WITH_SECRETS: &[&str] = &[
    ".gitconfig",
    ".config/git/config",
    ".cargo/config.toml",
    ".cargo/config",
];

/// `text` without the lines that carry a credential, or `None` when it has
/// none. A line goes when its key names a secret (`token`, `password`,
/// `extraheader`, `secret`) or it holds a URL with a user and password
/// (`https://user:token@host`); a section header holding one is replaced
/// by a comment, so its keys fall under no section.
pub fn redact(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    // A git value continued on the next line (`\` at the end) goes whole.
    let mut continued = false;
    for line in text.split_inclusive('\n') {
        let hidden = continued || carries_secret(line);
        continued = hidden && line.trim_end().ends_with('\\');
        if hidden {
            changed = true;
            out.push_str(if line.trim_start().starts_with('[') {
                "[cairn-redacted]\n"
            } else {
                "# (a line holding a credential, hidden from commands by cairn)\n"
            });
        } else {
            out.push_str(line);
        }
    }
    changed.then_some(out)
}

/// A line naming a secret anywhere (a key, or an inline table such as
/// `corp = { index = "…", token = "…" }`), or holding a URL with a user
/// and password.
fn carries_secret(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    // `pass` covers password, passwd, passphrase and `sendemail.smtpPass`;
    // `auth` covers authorization, `_auth` and auth tokens.
    let words = [
        "token",
        "pass",
        "secret",
        "extraheader",
        "auth",
        "apikey",
        "api_key",
        "api-key",
    ];
    words.iter().any(|w| lower.contains(w)) || url_with_credential(&lower)
}

/// Whether `s` holds `scheme://user:password@`, or a web address with any
/// user at all (`https://ghp_…@github.com/`: a token as the user name).
fn url_with_credential(s: &str) -> bool {
    s.match_indices("://").any(|(at, _)| {
        let rest = &s[at + 3..];
        let end = rest
            .find(|c: char| c == '/' || c == '"' || c.is_whitespace() || c == ']')
            .unwrap_or(rest.len());
        let web = s[..at].ends_with("http") || s[..at].ends_with("https");
        rest[..end]
            .split_once('@')
            .is_some_and(|(user, _)| user.contains(':') || web)
    })
}

/// Never readable, relative to home: secrets, some inside allowed paths.
pub const SECRETS: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".config/gh",
    ".config/git/credentials",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".npmrc",
    ".pypirc",
    ".pgpass",
    ".vault-token",
    ".password-store",
    ".terraform.d",
    ".local/share/keyrings",
    ".bash_history",
    ".zsh_history",
    ".python_history",
];

/// Logins kept in a config folder by the tools that keep them, relative
/// to `$XDG_CONFIG_HOME` when it lies outside home.
const CONFIG_SECRETS: &[&str] = &[
    "gcloud",
    "gh",
    "git/credentials",
    "glab-cli",
    "rclone",
    "containers/auth.json",
    "hub",
    "docker",
    "helm",
    "op",
    "netlify",
    "vercel",
    "heroku",
    "doctl",
    "hcloud",
    "stripe",
    "fly",
    "configstore",
    "pip",
    "pypoetry/auth.toml",
    "JetBrains",
];

/// Secrets and configuration files that an environment variable puts
/// somewhere else (`CARGO_HOME=/usr/local/cargo`, as container images
/// set it; `KUBECONFIG`, `AWS_SHARED_CREDENTIALS_FILE`, …), wherever they
/// are: the secrets to deny, and the configurations to show without their
/// credentials, as their places under home are. `var` reads a variable.
pub fn placed_by_env(var: impl Fn(&str) -> Option<String>) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut secrets = Vec::new();
    let mut configs = Vec::new();
    let dir = |name: &str| var(name).filter(|v| v.starts_with('/')).map(PathBuf::from);
    if let Some(cargo) = dir("CARGO_HOME") {
        secrets.push(cargo.join("credentials"));
        secrets.push(cargo.join("credentials.toml"));
        configs.push(cargo.join("config.toml"));
        configs.push(cargo.join("config"));
    }
    // Folders that hold keys among other things: the whole folder.
    for name in ["DOCKER_CONFIG", "DOCKER_CERT_PATH"] {
        secrets.extend(dir(name));
    }
    if let Some(config) = dir("XDG_CONFIG_HOME") {
        // Under home all of `~/.config` but `git` is unreadable; placed
        // elsewhere, the tools' logins there are denied one by one.
        for rel in CONFIG_SECRETS {
            secrets.push(config.join(rel));
        }
        configs.push(config.join("git/config"));
    }
    if let Some(data) = dir("XDG_DATA_HOME") {
        secrets.push(data.join("keyrings"));
    }
    for (name, rel) in [
        ("HF_HOME", "token"),
        ("GRADLE_USER_HOME", "gradle.properties"),
        ("COMPOSER_HOME", "auth.json"),
    ] {
        secrets.extend(dir(name).map(|d| d.join(rel)));
    }
    // Each names a secret file or folder itself.
    for name in [
        "AWS_SHARED_CREDENTIALS_FILE",
        "AWS_CONFIG_FILE",
        "GNUPGHOME",
        "NPM_CONFIG_USERCONFIG",
        "npm_config_userconfig",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "CLOUDSDK_CONFIG",
        "AZURE_CONFIG_DIR",
        "GH_CONFIG_DIR",
        "PASSWORD_STORE_DIR",
        "PGPASSFILE",
        "NETRC",
        "PYPIRC",
        "PIP_CONFIG_FILE",
        "TF_CLI_CONFIG_FILE",
        "SOPS_AGE_KEY_FILE",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "ANSIBLE_VAULT_PASSWORD_FILE",
        "BUNDLE_USER_CONFIG",
        "REGISTRY_AUTH_FILE",
        "RCLONE_CONFIG",
        "GLAB_CONFIG_DIR",
        "VAULT_CONFIG_PATH",
        "HISTFILE",
    ] {
        secrets.extend(dir(name));
    }
    if let Some(list) = var("KUBECONFIG") {
        secrets.extend(
            list.split(':')
                .filter(|p| p.starts_with('/'))
                .map(PathBuf::from),
        );
    }
    if let Some(git) = dir("GIT_CONFIG_GLOBAL") {
        configs.push(git);
    }
    (secrets, configs)
}

/// Files and folders that any variable named like a secret points to
/// (`DEPLOY_TOKEN_FILE=/srv/keys/deploy.token`, `TLS_KEY_PATH`,
/// `VAULT_SECRETS_DIR`, `KRB5CCNAME=FILE:/tmp/krb5cc_1000`), for the tools
/// [`placed_by_env`] does not know by name: the same words that withhold a
/// variable's value from commands (`config::secrets::looks_secret`), a
/// `KEY`-like word of its own (`SSL_KEY_FILE`, `SIGNING_KEYS_DIR`,
/// `JAVA_KEYSTORE`), or Kerberos's ticket cache. Only absolute paths below
/// a top-level folder count (a list separated by `:` too), and never the
/// system's program trees; the caller keeps out any that holds the
/// workspace or a home folder.
pub fn named_by_secret_variables(vars: impl IntoIterator<Item = (String, String)>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for (name, value) in vars {
        let upper = name.to_ascii_uppercase();
        let keyish = upper.split('_').any(|word| {
            matches!(
                word,
                "KEY" | "KEYS" | "KEYFILE" | "KEYRING" | "KEYSTORE" | "KEYCHAIN"
            )
        });
        if !(crate::config::secrets::looks_secret(&name) || keyish || upper == "KRB5CCNAME") {
            continue;
        }
        let value = value
            .strip_prefix("FILE:")
            .or_else(|| value.strip_prefix("DIR:"))
            .unwrap_or(&value);
        for entry in value.split(':') {
            let path = Path::new(entry);
            let deep = path.is_absolute() && path.components().count() > 2;
            let program = [
                "/usr",
                "/bin",
                "/sbin",
                "/lib",
                "/lib32",
                "/lib64",
                "/nix/store",
                "/proc",
                "/sys",
                "/dev",
            ]
            .iter()
            .any(|top| path.starts_with(top));
            if deep && !program && !entry.contains("/../") {
                out.push(path.to_path_buf());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_variable_named_like_a_secret_places_one() {
        let vars = [
            ("DEPLOY_TOKEN_FILE", "/srv/keys/deploy.token"),
            ("TLS_KEY_PATH", "/etc/app/tls.key"),
            ("SIGNING_KEYS_DIR", "/opt/keys"),
            ("KRB5CCNAME", "FILE:/tmp/krb5cc_1000"),
            (
                "APP_PASSWORD_FILES",
                "/run/secrets/a:relative:/run/secrets/b",
            ),
            // Not secrets, or not a place: left alone.
            ("SSL_CERT_FILE", "/etc/ssl/certs/ca-certificates.crt"),
            ("NODE_EXTRA_CA_CERTS", "/srv/corp-ca.pem"),
            ("GIT_ASKPASS", "/srv/askpass"),
            ("KEYBOARD_LAYOUT_FILE", "/srv/kbd"),
            ("API_TOKEN", "abc123"),
            ("SECRETS_DIR", "/srv"),
            ("HELPER_AUTH_PROGRAM", "/usr/libexec/helper"),
            ("ESCAPE_KEY_FILE", "/srv/../etc/x"),
        ];
        let found =
            named_by_secret_variables(vars.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let want: Vec<PathBuf> = [
            "/srv/keys/deploy.token",
            "/etc/app/tls.key",
            "/opt/keys",
            "/tmp/krb5cc_1000",
            "/run/secrets/a",
            "/run/secrets/b",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        assert_eq!(found, want);
    }

    #[test]
    fn secrets_placed_by_variables_are_found_where_they_point() {
        let vars = |k: &str| match k {
            "CARGO_HOME" => Some("/usr/local/cargo".to_string()),
            "KUBECONFIG" => Some("/etc/kube/a:relative:/srv/k/b".to_string()),
            "GNUPGHOME" => Some("gpg".to_string()),
            _ => None,
        };
        let (secrets, configs) = placed_by_env(vars);
        assert!(secrets.contains(&PathBuf::from("/usr/local/cargo/credentials.toml")));
        assert!(secrets.contains(&PathBuf::from("/etc/kube/a")));
        assert!(secrets.contains(&PathBuf::from("/srv/k/b")));
        // Relative values name nothing cairn can place.
        assert!(
            !secrets
                .iter()
                .any(|p| p.ends_with("gpg") || p.ends_with("relative"))
        );
        assert_eq!(
            configs,
            [
                PathBuf::from("/usr/local/cargo/config.toml"),
                PathBuf::from("/usr/local/cargo/config")
            ]
        );
    }

    #[test]
    fn credentials_are_taken_out_and_the_rest_stays() {
        let git = "[user]\n\tname = Person\n[url \"https://x:ghp_abc@github.com/\"]\n\tinsteadOf = https://github.com/\n[http \"https://corp\"]\n\textraHeader = Authorization: Bearer T\n[core]\n\teditor = vim\n";
        let out = redact(git).unwrap();
        assert!(!out.contains("ghp_abc") && !out.contains("Bearer"), "{out}");
        assert!(
            out.contains("name = Person") && out.contains("editor = vim"),
            "{out}"
        );
        let cargo = "[registries.corp]\nindex = \"sparse+https://c/\"\ntoken = \"cio_secret\"\n[net]\nretry = 3\n";
        let out = redact(cargo).unwrap();
        assert!(
            !out.contains("cio_secret") && out.contains("retry = 3"),
            "{out}"
        );
        assert_eq!(
            redact("[user]\n\tname = P\n[remote \"o\"]\n\turl = https://github.com/a/b\n"),
            None
        );
        assert_eq!(redact("url = git@github.com:a/b.git\n"), None);
        // Inline tables and continued values (the review's cases).
        let inline = "[registries]\ncorp = { index = \"sparse+https://c/\", token = \"cio_x\" }\n";
        assert!(!redact(inline).unwrap().contains("cio_x"));
        let continued =
            "[http]\n\textraheader = Authorization: \\\n\t\tBearer tok_y\n[core]\n\teditor = vi\n";
        let out = redact(continued).unwrap();
        assert!(
            !out.contains("tok_y") && out.contains("editor = vi"),
            "{out}"
        );
        // Sixth hostile review, H2: a token as the user name, a mail
        // password; a plain ssh user stays.
        let user = "[url \"https://ghp_tok@github.com/\"]\n\tinsteadOf = https://github.com/\n";
        assert!(!redact(user).unwrap().contains("ghp_tok"));
        let mail = "[sendemail]\n\tsmtpPass = hunter2\n\tsmtpUser = me\n";
        assert!(!redact(mail).unwrap().contains("hunter2"));
        assert_eq!(
            redact("[url \"ssh://git@host/\"]\n\tinsteadOf = h:\n"),
            None
        );
    }
}
