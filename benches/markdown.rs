//! Rendering costs of the transcript's heaviest cells: a 100 KB markdown
//! answer and a 2,000-line diff, at a typical terminal width.

use std::hint::black_box;

use cairn::tui::highlight;
use cairn::tui::markdown;
use cairn::tui::theme::Theme;
use cairn::tui::widgets::diff_view::{DiffLayout, DiffOptions, DiffView};
use criterion::{Criterion, criterion_group, criterion_main};

/// About 100 KB of varied markdown: prose, lists, quotes, tables, code.
fn answer() -> String {
    let section = r#"## Section heading

Some **bold** prose with `inline code`, a [link](https://example.com/x) and
*emphasis* that goes on long enough to need wrapping at eighty columns, with
a few CJK characters 日本語 and an emoji 👍 mixed in for good measure.

- first item with some words
- second item that is long enough to wrap across the available width here
  - nested item
- [x] finished task

> A quote that also wraps when it is long enough to exceed the width.

| Column | Value | Notes |
|--------|------:|-------|
| alpha  | 1     | short |
| beta   | 22    | a longer cell that will be shrunk |

```rust
fn compute_SECTION(values: &[u64]) -> u64 {
    values.iter().filter(|v| **v % 2 == 0).map(|v| v * 3).sum()
}
```

"#;
    let mut s = String::new();
    let mut i = 0;
    while s.len() < 100 * 1024 {
        // Distinct code per section, so the highlight cache cannot hit
        // within one render.
        s.push_str(&section.replace("SECTION", &i.to_string()));
        i += 1;
    }
    s
}

fn diff_texts() -> (String, String) {
    let mut old = String::new();
    let mut new = String::new();
    for i in 0..2000 {
        let line = format!("    let value_{i} = compute(&data[{i}..], {});\n", i * 7);
        old.push_str(&line);
        if i % 10 == 3 {
            new.push_str(&format!(
                "    let value_{i} = compute_fast(&data[{i}..], {});\n",
                i * 7
            ));
        } else if i % 25 == 0 {
            new.push_str(&line);
            new.push_str("    log::debug!(\"checkpoint\");\n");
        } else {
            new.push_str(&line);
        }
    }
    (old, new)
}

fn benches(c: &mut Criterion) {
    highlight::ensure_loaded();
    let theme = Theme::dark();
    let text = answer();
    c.bench_function("markdown_100kb_w100_cold", |b| {
        b.iter(|| {
            highlight::clear_cache();
            markdown::render(black_box(&text), 100, &theme)
        })
    });
    // Re-rendering (streaming, resize): complete code blocks are cached.
    c.bench_function("markdown_100kb_w100_warm", |b| {
        b.iter(|| markdown::render(black_box(&text), 100, &theme))
    });
    let prose = text.replace("```rust", "```text");
    c.bench_function("markdown_100kb_w100_unhighlighted_code", |b| {
        b.iter(|| markdown::render(black_box(&prose), 100, &theme))
    });
    let (old, new) = diff_texts();
    c.bench_function("diff_2000_lines_new", |b| {
        b.iter(|| DiffView::new("src/lib.rs", black_box(&old), black_box(&new)))
    });
    let view = DiffView::new("src/lib.rs", &old, &new);
    let opts = DiffOptions {
        fold: false,
        ..DiffOptions::default()
    };
    // The first call fills the per-theme highlight cache, as a dialog's first
    // frame does; later frames only lay out.
    let _ = view.lines(120, DiffLayout::Unified, &theme, opts);
    c.bench_function("diff_2000_lines_layout_unified_w120", |b| {
        b.iter(|| view.lines(120, DiffLayout::Unified, &theme, opts))
    });
    c.bench_function("diff_2000_lines_layout_side_by_side_w200", |b| {
        b.iter(|| view.lines(200, DiffLayout::SideBySide, &theme, opts))
    });
    c.bench_function("diff_2000_lines_first_frame_with_highlighting", |b| {
        b.iter(|| {
            let v = DiffView::new("src/lib.rs", &old, &new);
            v.lines(120, DiffLayout::Unified, &theme, opts)
        })
    });
}

criterion_group! {
    name = group;
    config = Criterion::default().sample_size(20);
    targets = benches
}
criterion_main!(group);
