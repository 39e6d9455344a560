//! Issue 22, the home class when `HOME` names another folder than the
//! account's own (`sudo -E`, a CI container's `HOME=/github/home`): the
//! sandbox hid only `HOME`, so a command read everything in the account's
//! real home — its keys, tokens, sibling projects. Now both homes are
//! hidden, each with the same allow-list.
//!
//! The fixture's `HOME` is its own folder; the account's home is the real
//! one of the user running the tests, so this case puts its canaries
//! there (removed when it ends) and skips where it cannot.

use crate::escape_fixture::{Fixture, assert_contained, random_hex};
use crate::mock_model::{Format, MockModel, Reply};
use crate::{bash, put};

/// The account's own home, from its passwd record.
fn account_home() -> Option<std::path::PathBuf> {
    // SAFETY: `getpwuid` returns null or a pointer to a static record we
    // only read before any other passwd call in this thread.
    unsafe {
        let pw = libc::getpwuid(libc::geteuid());
        if pw.is_null() || (*pw).pw_dir.is_null() {
            return None;
        }
        let dir = std::ffi::CStr::from_ptr((*pw).pw_dir).to_str().ok()?;
        Some(std::path::PathBuf::from(dir))
    }
}

/// Removes what the case put in the account's home, however it ends.
struct Planted(Vec<std::path::PathBuf>);

impl Drop for Planted {
    fn drop(&mut self) {
        for p in &self.0 {
            let _ = std::fs::remove_dir_all(p).or_else(|_| std::fs::remove_file(p));
        }
    }
}

async fn case(mode: &str) {
    let mut f = Fixture::new();
    let Some(own) = account_home().filter(|h| h.is_dir() && *h != f.home) else {
        eprintln!("skipped: no account home apart from HOME to test");
        return;
    };
    let tag = random_hex();
    let (file, dir) = (
        own.join(format!(".cairn-escape-{tag}")),
        own.join(format!("cairn-escape-{tag}")),
    );
    let secret = format!("account-home-canary-{tag}");
    let sibling = format!("account-sibling-canary-{tag}");
    let planted = Planted(vec![file.clone(), dir.clone()]);
    if std::fs::write(&file, &secret).is_err()
        || std::fs::create_dir_all(&dir).is_err()
        || std::fs::write(dir.join(".env"), &sibling).is_err()
    {
        eprintln!(
            "skipped: cannot write in the account's home {}",
            own.display()
        );
        return;
    }
    f.add_canary("a file in the account's own home", &secret);
    f.add_canary("a project in the account's own home", &sibling);
    let (f1, d1, o) = (file.display(), dir.display(), own.display());
    let mock = MockModel::start(
        Format::Anthropic,
        Fixture::script(vec![
            // A script, so that no path is in the command the gate reads.
            put(
                "w1",
                "look.sh",
                &format!(
                    "cat {f1}; cat {d1}/.env; ls -a {o}\ngrep -r canary {o} 2>/dev/null | head\n"
                ),
            ),
            bash("b1", "sh look.sh"),
            Reply::text("Looked around."),
        ]),
    )
    .await;
    let before = f.snapshot();
    f.run(&mock, mode).await;
    assert_contained(
        &format!("the account's own home ({mode})"),
        &f.escapes(&mock, &before),
    );
    drop(planted);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_accounts_own_home_stays_unread_in_smart_mode() {
    case("smart").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_accounts_own_home_stays_unread_in_auto_mode() {
    case("auto").await;
}
