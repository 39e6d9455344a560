//! What the sandbox adds to starting a command: `true` unconfined, and
//! `true` under the default policy built as `bash` builds it for every
//! command, in each layer: the kernel layer (Landlock ruleset walked from
//! `/`, seccomp — what every command ran under before bubblewrap) and the
//! namespace layer (bubblewrap, when it works here).

use std::process::Command;

use cairn::sandbox::{Layer, Sandbox, Support, bwrap, std_command};
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
    let mut layers = vec![("kernel", Layer::Kernel)];
    if bwrap::available().is_some() {
        layers.push(("bubblewrap", Layer::Namespace));
    } else {
        eprintln!("note: bubblewrap is not used here: {:?}", bwrap::why_not());
    }
    for (name, layer) in layers {
        group.bench_function(format!("sandboxed_{name}"), |b| {
            b.iter(|| {
                let policy = sandbox.policy_in(&workspace, layer);
                let mut cmd =
                    std_command("true".as_ref(), policy.as_ref()).expect("sandbox builds");
                assert!(cmd.status().expect("true runs").success());
            })
        });
        group.bench_function(format!("policy_only_{name}"), |b| {
            b.iter(|| {
                let policy = sandbox.policy_in(&workspace, layer);
                std_command("true".as_ref(), policy.as_ref()).expect("sandbox builds")
            })
        });
    }
    group.finish();
}

criterion_group!(benches, start_true);
criterion_main!(benches);
