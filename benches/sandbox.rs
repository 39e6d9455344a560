//! What the sandbox adds to starting a command: `true` unconfined, and
//! `true` under the default policy built as `bash` builds it for every
//! command (policy, Landlock ruleset walked from `/`, seccomp program).

use std::process::Command;

use cairn::sandbox::{Sandbox, Support, std_command};
use criterion::{Criterion, criterion_group, criterion_main};

fn start_true(c: &mut Criterion) {
    let workspace = std::env::current_dir().expect("a current directory");
    let sandbox = Sandbox::default_for_user();
    if !Support::detect().enforces_files() {
        eprintln!("note: this system enforces no sandbox; the sandboxed figure is unconfined too");
    }
    let mut group = c.benchmark_group("start_true");
    group.bench_function("unconfined", |b| {
        b.iter(|| {
            let status = Command::new("true").status().expect("true runs");
            assert!(status.success());
        })
    });
    group.bench_function("sandboxed", |b| {
        b.iter(|| {
            let policy = sandbox.policy(&workspace);
            let mut cmd = std_command("true".as_ref(), policy.as_ref()).expect("sandbox builds");
            assert!(cmd.status().expect("true runs").success());
        })
    });
    group.bench_function("policy_and_ruleset_only", |b| {
        b.iter(|| {
            let policy = sandbox.policy(&workspace);
            std_command("true".as_ref(), policy.as_ref()).expect("sandbox builds")
        })
    });
    group.finish();
}

criterion_group!(benches, start_true);
criterion_main!(benches);
