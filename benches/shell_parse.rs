//! Issue 24: what judging a hostile, deeply nested `bash` command costs.
//! Before the bound, depth 1,000 of `$(…)` took over 34 s and `{ … }` at
//! depth 500 overflowed the stack; now anything past the nesting limit is
//! refused by a linear pre-scan, and the deepest accepted command is
//! parsed whole.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};

fn substitutions(depth: usize) -> String {
    format!("echo {}x{}", "$(echo ".repeat(depth), ")".repeat(depth))
}

fn braces(depth: usize) -> String {
    format!("{}echo x{}", "{ ".repeat(depth), "; }".repeat(depth))
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("shell_parse");
    group.sample_size(20);
    for (name, command) in [
        ("substitutions_depth_1000", substitutions(1000)),
        ("braces_depth_1000", braces(1000)),
        ("substitutions_depth_10000", substitutions(10_000)),
        ("substitutions_depth_60", substitutions(60)),
        ("braces_depth_60", braces(60)),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| cairn::shell::parse(black_box(&command)))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
