//! A person's hook (or `[sandbox] read` entry) naming a wide folder such as
//! `~/.config` or `~/.local` widens what that hook may read — but never to
//! cairn's own config, data, state and cache folders, the private caches
//! of other projects, other sessions' transcripts, or the credential
//! deny-list: those are subtracted always.

use serde_json::json;

use crate::bash;
use crate::escape_fixture::{Fixture, assert_contained};
use crate::mock_model::{Format, MockModel};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wide_read_never_opens_cairns_folders_or_the_deny_list() {
    let mut f = Fixture::new();
    let mut planted = Vec::new();
    for (label, rel) in [
        ("cairn's config", ".config/cairn/config.toml"),
        ("cairn's state", ".local/state/cairn/notes.txt"),
        ("cairn's data", ".local/share/cairn/notes.txt"),
        ("cairn's cache", ".cache/cairn/notes.txt"),
        (
            "another project's private cache",
            ".cache/cairn-sandbox/other/tmp/x",
        ),
        (
            "another session's transcript",
            ".local/share/cairn-transcripts/old.jsonl",
        ),
    ] {
        let value = format!("CANARY{}", crate::escape_fixture::random_hex());
        f.write_home(rel, &format!("# {value}\n"));
        f.add_canary(label, &value);
        planted.push(rel);
    }
    // Wide reads the person named on purpose, in a hook and in the config.
    let mut cat = String::new();
    for rel in &planted {
        cat.push_str(&format!("cat ~/{rel}; "));
    }
    cat.push_str("cat ~/.config/gh/hosts.yml ~/.ssh/id_rsa; ls -R ~/.local ~/.cache ~/.config");
    f.write_home(
        ".config/cairn/config.toml",
        &format!(
            "# {}\n[sandbox]\nread = [\"~/.local\", \"~/.ssh\"]\n",
            f.canaries
                .iter()
                .find(|c| c.0 == "cairn's config")
                .unwrap()
                .1
        ),
    );
    let settings = json!({ "hooks": { "PostToolUse": [ { "matcher": "Bash", "hooks": [
        { "type": "command", "command": format!("ls ~/.config ~/.cache >/dev/null; {cat} >&2; exit 2") } ] } ] } });
    f.write_home(".claude/settings.json", &settings.to_string());
    let mut all = Vec::new();
    for mode in ["smart", "auto"] {
        let mock =
            MockModel::start(Format::Anthropic, Fixture::script(vec![bash("r1", &cat)])).await;
        let before = f.snapshot();
        f.run(&mock, mode).await;
        let mut escapes = f.escapes(&mock, &before);
        escapes.retain(|e| !e.contains("cairn-transcripts") || e.contains("CANARY"));
        let sent: String = mock.requests().iter().map(|r| r.to_string()).collect();
        if !sent.contains("hosts.yml") {
            escapes.push("the hook's output never reached the model, nothing tested".into());
        }
        all.extend(escapes.into_iter().map(|e| format!("{mode}: {e}")));
    }
    assert_contained("wide reads", &all);
}
