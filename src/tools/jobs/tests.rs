//! Following a background job: its lines as they come, then how it ended.

use std::sync::Arc;
use std::time::Duration;

use super::*;

fn spawn(script: &str) -> Arc<Process> {
    let dir = std::env::temp_dir();
    Arc::new(Process::spawn(script, script, &dir, None).unwrap())
}

/// Follows `p` to its end: every batch `send` got, and how it ended.
async fn follow_all(p: &Process) -> (Vec<String>, JobEnd) {
    let mut batches = Vec::new();
    let end = tokio::time::timeout(
        Duration::from_secs(20),
        p.follow(Duration::from_millis(20), |c| batches.push(c)),
    )
    .await
    .expect("the follower ends with the job");
    (batches, end)
}

#[tokio::test]
async fn a_follower_gets_lines_as_they_come_then_the_exit() {
    let p = spawn("for i in 1 2 3; do echo tick$i; sleep 0.3; done; printf tail; exit 3");
    let (batches, end) = follow_all(&p).await;
    assert!(
        batches.len() >= 3,
        "one batch per line as they came: {batches:?}"
    );
    assert_eq!(batches[0], "tick1\n");
    // A partial last line comes once the shell exited.
    assert_eq!(batches.concat(), "tick1\ntick2\ntick3\ntail");
    let JobEnd::Exited { code: 3, ran } = end else {
        panic!("{end:?}");
    };
    assert!(
        ran >= Duration::from_millis(800) && ran < Duration::from_secs(15),
        "{ran:?}"
    );
}

#[tokio::test]
async fn a_follower_starts_with_the_last_part_of_earlier_output() {
    // 100 000 lines: more than a follower starts with.
    let p = spawn("seq 1 100000; sleep 0.2");
    p.wait().await;
    let (batches, end) = follow_all(&p).await;
    let text = batches.concat();
    assert!(text.len() <= FOLLOW_CATCH_UP, "{}", text.len());
    assert!(
        text.starts_with(|c: char| c.is_ascii_digit()),
        "from a line's start"
    );
    assert!(text.ends_with("99999\n100000\n"), "the newest lines");
    assert!(matches!(end, JobEnd::Exited { code: 0, .. }), "{end:?}");
}

#[tokio::test]
async fn a_killed_job_ends_as_killed() {
    let p = spawn("echo up; sleep 30");
    let follower = {
        let p = p.clone();
        tokio::spawn(async move { follow_all(&p).await })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    p.kill().await;
    let (batches, end) = follower.await.unwrap();
    assert_eq!(batches.concat(), "up\n");
    assert!(
        matches!(end, JobEnd::Killed { ran } if ran < Duration::from_secs(20)),
        "{end:?}"
    );
}

#[tokio::test]
async fn jobs_of_a_dropped_table_end_as_killed() {
    let table = JobTable::new();
    let p = spawn("sleep 30");
    table.add(p.clone());
    let follower = tokio::spawn(async move { follow_all(&p).await });
    drop(table);
    let (_, end) = follower.await.unwrap();
    assert!(matches!(end, JobEnd::Killed { .. }), "{end:?}");
}

/// A command that ended after a census's last check still counts for its
/// next one (it could have written unbound while it ran); one that ended
/// before does not.
#[test]
fn a_command_that_ended_since_the_last_check_still_counts() {
    let began = Instant::now() - std::time::Duration::from_secs(3600);
    let key = -7_700_001;
    lock_running().insert(key, began);
    let checked = Instant::now();
    ended(key);
    let oldest = oldest_running_since(Some(checked));
    assert!(oldest.is_some_and(|o| o <= began), "{oldest:?}");
    // Checked after it ended: an hour-old start is no longer counted
    // (other tests' commands may run meanwhile, all younger).
    let oldest = oldest_running_since(Some(Instant::now()));
    assert!(oldest.is_none_or(|o| o > began), "{oldest:?}");
}
