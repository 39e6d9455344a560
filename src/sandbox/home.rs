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
