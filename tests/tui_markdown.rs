//! Markdown rendering: snapshots of every element at narrow and wide widths,
//! width guarantees, and streaming prefixes.

use cairn::tui::highlight;
use cairn::tui::markdown::{code_blocks, render};
use cairn::tui::theme::{ColorDepth, Theme};
use cairn::tui::wrap::spans_width;
use proptest::prelude::*;
use ratatui::style::Modifier;
use ratatui::text::Line;

const SAMPLE: &str = r#"# Title
## Second *level*

A paragraph with *emphasis*, **strong**, ~~gone~~ and `inline code`, plus a
[link](https://example.com/docs) and <https://auto.example>.
Wrapping should hang nicely: 日本語のテキストも折り返されます 👍🏽 done.

- one
- two, which is long enough that it must wrap onto a second line here
  - nested a
  - nested b
- [ ] open task
- [x] done task

1. first
2. second
10. tenth

> Quoted text that is long enough to wrap across more than one line of output.
> > nested quote

```rust
fn main() {
	let greeting = "hello"; // a comment that is quite long and will need wrapping at narrow widths
}
```

| Name | Count | Note |
|:-----|------:|:----:|
| alpha | 1 | short |
| beta | 22 | a much longer note that has to wrap |

---

    indented code

Last paragraph.
"#;

fn text(lines: &[Line]) -> String {
    lines
        .iter()
        .map(|l| {
            let s: String = l.spans.iter().map(|s| s.content.as_ref()).collect();
            s.trim_end().to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_element_wide() {
    highlight::ensure_loaded();
    insta::assert_snapshot!(text(&render(SAMPLE, 100, &Theme::dark())));
}

#[test]
fn every_element_narrow() {
    highlight::ensure_loaded();
    insta::assert_snapshot!(text(&render(SAMPLE, 32, &Theme::dark())));
}

#[test]
fn lines_never_exceed_width() {
    highlight::ensure_loaded();
    let theme = Theme::dark();
    for width in 1..=120u16 {
        for line in render(SAMPLE, width, &theme) {
            assert!(
                spans_width(&line.spans) <= usize::from(width),
                "width {width}: {:?}",
                text(&[line])
            );
        }
    }
}

#[test]
fn styles_reach_the_spans() {
    highlight::ensure_loaded();
    let theme = Theme::dark();
    let lines = render(
        "**bold** and `code`\n\n```rust\nlet x = 1;\n```\n",
        40,
        &theme,
    );
    let bold = lines[0].spans.iter().find(|s| s.content == "bold").unwrap();
    assert!(bold.style.add_modifier.contains(Modifier::BOLD));
    let code = lines[0].spans.iter().find(|s| s.content == "code").unwrap();
    assert_eq!(code.style.fg, theme.inline_code.fg);
    let code_line = lines
        .iter()
        .find(|l| text(&[(*l).clone()]).contains("let x"))
        .unwrap();
    assert!(
        code_line
            .spans
            .iter()
            .all(|s| s.style.bg == theme.code_bg.bg)
    );
    let fgs: std::collections::HashSet<_> = code_line.spans.iter().map(|s| s.style.fg).collect();
    assert!(fgs.len() > 1, "code is highlighted: {fgs:?}");
}

#[test]
fn headings_show_their_level_by_style_not_hashes() {
    let theme = Theme::dark();
    let lines = render("# Top\n\n## Next\n\ntext\n", 40, &theme);
    let shown = text(&lines);
    assert!(!shown.contains('#'), "{shown}");
    let span = |word: &str| {
        lines
            .iter()
            .flat_map(|l| l.spans.iter())
            .find(|s| s.content.contains(word))
            .map(|s| s.style.add_modifier)
            .unwrap()
    };
    assert!(span("Top").contains(Modifier::BOLD | Modifier::UNDERLINED));
    assert!(span("Next").contains(Modifier::BOLD));
    assert!(!span("Next").contains(Modifier::UNDERLINED));
}

#[test]
fn nocolor_theme_renders_without_colour() {
    highlight::ensure_loaded();
    let theme = Theme::dark().adapt(ColorDepth::NoColor);
    for line in render(SAMPLE, 80, &theme) {
        for s in &line.spans {
            assert_eq!((s.style.fg, s.style.bg), (None, None), "{:?}", s.content);
        }
    }
}

#[test]
fn finds_code_blocks() {
    let blocks = code_blocks(SAMPLE);
    assert_eq!(blocks.len(), 2);
    assert_eq!(blocks[0].lang.as_deref(), Some("rust"));
    assert!(blocks[0].code.starts_with("fn main() {\n"));
    assert_eq!(blocks[1].lang, None);
    assert_eq!(blocks[1].code, "indented code\n");
}

#[test]
fn unclosed_fence_renders_as_code() {
    let theme = Theme::dark();
    let lines = render("Look:\n\n```py\nprint(1)\n", 40, &theme);
    let t = text(&lines);
    assert!(t.contains(" py") && t.contains("print(1)"), "{t}");
    let last = lines.last().unwrap();
    assert!(last.spans.iter().all(|s| s.style.bg == theme.code_bg.bg));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn random_markdown_never_panics_or_overflows(
        src in "([-*#>|`~ \\[\\]()!1.xa-z日👍\n\t]|```|\\| --- \\|){0,200}",
        width in 1u16..200,
    ) {
        for line in render(&src, width, &Theme::dark()) {
            prop_assert!(spans_width(&line.spans) <= usize::from(width));
        }
    }
}

#[test]
fn nested_blocks_keep_their_indent() {
    let src = "1. Step one:\n\n   ```sh\n   cargo build\n   ```\n\n2. Step two has a paragraph\n   that continues.\n\n   > a quote in an item\n\n   - sub bullet\n\n     second paragraph of the sub bullet\n\nAfter.\n\nLine one  \nhard break\n\n![logo](img.png) and [same](https://same.example) <https://same.example>\n";
    insta::assert_snapshot!(text(&render(src, 40, &Theme::dark())));
}
