use super::*;
use crate::sessions::age;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn key(c: KeyCode) -> KeyEvent {
    KeyEvent::new(c, KeyModifiers::NONE)
}
fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn entry(id: &str, title: &str, snippet: Option<&str>) -> BrowserEntry {
    BrowserEntry {
        id: id.into(),
        title: title.into(),
        updated_at: 1_000_000 - 120_000,
        message_count: 12,
        first_prompt: format!("prompt of {title}"),
        project: "/p".into(),
        snippet: snippet.map(str::to_string),
        subagent_of: None,
    }
}

fn screen(b: &mut SessionBrowser, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| b.render(f.area(), f.buffer_mut(), &BrowserStyles::default()))
        .unwrap();
    let buf = t.backend().buffer().clone();
    let mut out = String::new();
    for y in 0..h {
        for x in 0..w {
            out.push_str(buf[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

#[test]
fn typing_queries_and_stale_results_are_ignored() {
    let (mut b, first) = SessionBrowser::open(1_000_000);
    assert_eq!(
        first,
        BrowserAction::Query {
            text: String::new(),
            all_projects: false,
            offset: 0,
        }
    );
    assert_eq!(
        b.handle_key(key(KeyCode::Char('x')), &KeyMap::default()),
        BrowserAction::Query {
            text: "x".into(),
            all_projects: false,
            offset: 0,
        }
    );
    // Results for the old (empty) query arrive late: ignored.
    assert_eq!(
        b.set_entries("", vec![entry("a", "A", None)], 1_000_000, 0),
        BrowserAction::None
    );
    assert_eq!(b.selected_id().map(SessionId::as_str), None);
    assert_eq!(
        b.set_entries(
            "x",
            vec![entry("b", "B", Some("the \u{1}x\u{2} word"))],
            1_000_000,
            0
        ),
        BrowserAction::Preview("b".into())
    );
    assert_eq!(
        b.handle_key(key(KeyCode::Enter), &KeyMap::default()),
        BrowserAction::Resume("b".into())
    );
    assert_eq!(
        b.handle_key(key(KeyCode::Tab), &KeyMap::default()),
        BrowserAction::Query {
            text: "x".into(),
            all_projects: true,
            offset: 0,
        }
    );
}

#[test]
fn the_next_page_loads_as_the_selection_nears_the_end() {
    let (mut b, _) = SessionBrowser::open(1_000_000);
    let page = |from: usize, n: usize| -> Vec<BrowserEntry> {
        (from..from + n)
            .map(|i| entry(&format!("s{i}"), &format!("S{i}"), None))
            .collect()
    };
    b.set_entries("", page(0, BROWSER_PAGE), 1_000_000, 0);
    // Far from the end: no paging.
    assert_eq!(
        b.handle_key(key(KeyCode::Down), &KeyMap::default()),
        BrowserAction::Preview("s1".into())
    );
    b.selected = BROWSER_PAGE - 25;
    let action = b.handle_key(key(KeyCode::PageDown), &KeyMap::default());
    assert_eq!(
        action,
        BrowserAction::Then(
            Box::new(BrowserAction::Preview(
                format!("s{}", BROWSER_PAGE - 15).into()
            )),
            Box::new(BrowserAction::Query {
                text: String::new(),
                all_projects: false,
                offset: BROWSER_PAGE,
            })
        )
    );
    // Only one request at a time.
    assert!(matches!(
        b.handle_key(key(KeyCode::Down), &KeyMap::default()),
        BrowserAction::Preview(_)
    ));
    b.set_entries("", page(BROWSER_PAGE, 7), 1_000_000, BROWSER_PAGE);
    assert_eq!(b.entries.len(), BROWSER_PAGE + 7);
    assert!(!b.more, "a short page is the last one");
    b.selected = BROWSER_PAGE + 5;
    assert!(matches!(
        b.handle_key(key(KeyCode::Down), &KeyMap::default()),
        BrowserAction::Preview(_)
    ));
}

#[test]
fn export_asks_for_the_format() {
    let (mut b, _) = SessionBrowser::open(1_000_000);
    b.set_entries("", vec![entry("a", "A", None)], 1_000_000, 0);
    assert_eq!(
        b.handle_key(ctrl('e'), &KeyMap::default()),
        BrowserAction::None
    );
    assert!(screen(&mut b, 100, 8).contains("j JSON"));
    assert_eq!(
        b.handle_key(key(KeyCode::Char('j')), &KeyMap::default()),
        BrowserAction::Export {
            id: "a".into(),
            json: true
        }
    );
    b.handle_key(ctrl('e'), &KeyMap::default());
    assert_eq!(
        b.handle_key(key(KeyCode::Enter), &KeyMap::default()),
        BrowserAction::Export {
            id: "a".into(),
            json: false
        }
    );
    b.handle_key(ctrl('e'), &KeyMap::default());
    assert_eq!(
        b.handle_key(key(KeyCode::Esc), &KeyMap::default()),
        BrowserAction::None
    );
    assert!(screen(&mut b, 100, 8).contains("search:"));
}

#[test]
fn rename_and_confirmed_delete() {
    let (mut b, _) = SessionBrowser::open(1_000_000);
    b.set_entries(
        "",
        vec![entry("a", "Old", None), entry("b", "B", None)],
        1_000_000,
        0,
    );
    b.handle_key(ctrl('r'), &KeyMap::default());
    for _ in 0..3 {
        b.handle_key(key(KeyCode::Backspace), &KeyMap::default());
    }
    for c in "New".chars() {
        b.handle_key(key(KeyCode::Char(c)), &KeyMap::default());
    }
    assert_eq!(
        b.handle_key(key(KeyCode::Enter), &KeyMap::default()),
        BrowserAction::Rename {
            id: "a".into(),
            title: "New".into()
        }
    );
    b.handle_key(ctrl('d'), &KeyMap::default());
    assert_eq!(
        b.handle_key(key(KeyCode::Char('n')), &KeyMap::default()),
        BrowserAction::None
    );
    b.handle_key(ctrl('d'), &KeyMap::default());
    assert_eq!(
        b.handle_key(key(KeyCode::Char('y')), &KeyMap::default()),
        BrowserAction::Delete("a".into())
    );
    assert_eq!(b.selected_id().map(SessionId::as_str), Some("b"));
}

#[test]
fn ctrl_u_clears_the_new_title_and_ctrl_w_deletes_a_word() {
    // As at the prompt line: before, both were ignored, and a title typed
    // after Ctrl+U was appended to the old one ("OldNew").
    let (mut b, _) = SessionBrowser::open(1_000_000);
    b.set_entries("", vec![entry("a", "Old title", None)], 1_000_000, 0);
    let keys = KeyMap::default();
    b.handle_key(ctrl('r'), &keys);
    b.handle_key(ctrl('w'), &keys);
    for c in "name".chars() {
        b.handle_key(key(KeyCode::Char(c)), &keys);
    }
    b.handle_key(ctrl('u'), &keys);
    for c in "New".chars() {
        b.handle_key(key(KeyCode::Char(c)), &keys);
    }
    let shown = screen(&mut b, 100, 8);
    assert!(shown.contains("rename: New"), "{shown}");
    // While a title is typed, Enter saves it: the line of keys says so
    // (it said "Enter resume").
    assert!(shown.contains("Enter save the title"), "{shown}");
    assert!(!shown.contains("resume"), "{shown}");
    assert_eq!(
        b.handle_key(key(KeyCode::Enter), &keys),
        BrowserAction::Rename {
            id: "a".into(),
            title: "New".into()
        }
    );
}

#[test]
fn renders_list_snippet_and_preview() {
    let (mut b, _) = SessionBrowser::open(1_000_000);
    b.set_entries("cargo", vec![], 1_000_000, 0);
    b.handle_key(key(KeyCode::Char('c')), &KeyMap::default());
    b.set_entries(
        "c",
        vec![entry(
            "a",
            "Fix the build",
            Some("ran \u{1}cargo\u{2} build"),
        )],
        1_000_000,
        0,
    );
    b.set_preview(
        &SessionId::from("a"),
        vec!["> fix the build".into(), "Done.".into()],
    );
    let s = screen(&mut b, 120, 20);
    assert!(s.contains("Fix the build"), "{s}");
    assert!(s.contains("2m ago · 12 msgs"), "{s}");
    assert!(s.contains("ran cargo build"), "{s}");
    assert!(s.contains("> fix the build"), "{s}");
    for (w, h) in [(40, 12), (10, 3), (200, 60)] {
        screen(&mut b, w, h);
    }
}

/// The browser drawn with matched text marked `[like this]`, for
/// snapshots that show where the highlight falls.
fn marked(b: &mut SessionBrowser, w: u16, h: u16) -> String {
    use ratatui::style::{Modifier, Style};
    let styles = BrowserStyles {
        matched: Style::new().add_modifier(Modifier::UNDERLINED),
        ..BrowserStyles::default()
    };
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| b.render(f.area(), f.buffer_mut(), &styles))
        .unwrap();
    let buf = t.backend().buffer().clone();
    let mut out = String::new();
    for y in 0..h {
        let mut inside = false;
        for x in 0..w {
            let cell = &buf[(x, y)];
            let m = cell.modifier.contains(Modifier::UNDERLINED);
            if m != inside {
                out.push(if m { '[' } else { ']' });
                inside = m;
            }
            out.push_str(cell.symbol());
        }
        if inside {
            out.push(']');
        }
        out.push('\n');
    }
    out
}

fn three_sessions() -> Vec<BrowserEntry> {
    let mut older = entry("b", "Speed up the parser", None);
    older.updated_at = 1_000_000 - 3 * 86_400_000;
    older.message_count = 48;
    let mut oldest = entry("c", "", None);
    oldest.updated_at = 1_000_000 - 40 * 86_400_000;
    oldest.first_prompt = "why does CI fail on arm64?".into();
    vec![entry("a", "Fix the build", None), older, oldest]
}

#[test]
fn snapshot_of_the_list() {
    let (mut b, _) = SessionBrowser::open(1_000_000);
    b.set_entries("", three_sessions(), 1_000_000, 0);
    insta::assert_snapshot!(marked(&mut b, 100, 12));
}

#[test]
fn snapshot_of_a_search_with_its_highlight() {
    let (mut b, _) = SessionBrowser::open(1_000_000);
    for c in "linker".chars() {
        b.handle_key(key(KeyCode::Char(c)), &KeyMap::default());
    }
    let mut hit = entry(
        "b",
        "Speed up the parser",
        Some("the \u{1}linker\u{2} ran out of memory; set \u{1}linker\u{2} = lld"),
    );
    hit.message_count = 48;
    b.set_entries("linker", vec![hit], 1_000_000, 0);
    insta::assert_snapshot!(marked(&mut b, 100, 10));
}

#[test]
fn snapshot_of_the_preview() {
    let (mut b, _) = SessionBrowser::open(1_000_000);
    b.set_entries("", three_sessions(), 1_000_000, 0);
    b.set_preview(
        &SessionId::from("a"),
        vec![
            "› the build fails after the upgrade".into(),
            "  ⚙ bash cargo build".into(),
            "    ✗ error[E0432]: unresolved import `foo::bar`".into(),
            "The import moved; fixing it.".into(),
            "  ⚙ edit src/main.rs +1 −1".into(),
            "Fixed: the build passes.".into(),
        ],
    );
    insta::assert_snapshot!(marked(&mut b, 110, 14));
}

#[test]
fn ages_read_naturally() {
    assert_eq!(age(10_000, 9_000), "just now");
    assert_eq!(age(4_000_000, 0), "1h ago");
    assert_eq!(age(90_000_000_000, 0), "34mo ago");
}

/// The whole screen with the browser open over it, the current session
/// marked and a message from the last action inside the browser.
fn browser_screen(w: u16, h: u16) -> String {
    let mut m = crate::tui::test_support::model();
    m.session = Some("b".into());
    let (mut b, _) = SessionBrowser::open(1_000_000);
    b.current = m.session.clone();
    b.set_entries("", three_sessions(), 1_000_000, 0);
    b.set_preview(
        &"a".into(),
        vec![
            "› the build fails".into(),
            "Fixed: the build passes.".into(),
        ],
    );
    b.tell("Forked into a new session 0a1b2c3d.".into(), false);
    m.open_panel(crate::tui::panels::Panel::Sessions(Box::new(b)));
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| crate::tui::view::view(&mut m, f)).unwrap();
    let buf = t.backend().buffer().clone();
    let mut out = String::new();
    for y in 0..h {
        for x in 0..w {
            out.push_str(buf[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

#[test]
fn snapshot_at_80_columns_keeps_the_list_and_every_key() {
    let s = browser_screen(80, 24);
    for key in [
        "resume",
        "rename",
        "delete",
        "fork",
        "rewind",
        "export",
        "Esc close",
    ] {
        assert!(s.contains(key), "{key} missing:\n{s}");
    }
    assert!(s.contains("● Speed up the parser"), "{s}");
    assert!(s.contains("Forked into a new session"), "{s}");
    insta::assert_snapshot!(s);
}

#[test]
fn snapshot_at_120_columns_with_the_preview_beside() {
    let s = browser_screen(120, 40);
    assert!(s.contains("Fixed: the build passes."), "{s}");
    assert!(s.contains("· current"), "{s}");
    insta::assert_snapshot!(s);
}

#[test]
fn a_sub_agents_session_is_listed_under_its_parent_and_names_it() {
    let (mut b, _) = SessionBrowser::open(1_000_000);
    let mut child = entry("c1", "explore: find the parser", None);
    child.subagent_of = Some("p1".into());
    let mut orphan = entry("c2", "general: gone parent", None);
    orphan.subagent_of = Some("zz99aa00-gone".into());
    let entries = vec![
        child,
        entry("o1", "Other work", None),
        entry("p1", "Fix the parser", None),
        orphan,
    ];
    b.set_entries("", entries, 1_000_000, 0);
    let order: Vec<String> = b.entries.iter().map(|e| e.id.to_string()).collect();
    assert_eq!(order, ["o1", "p1", "c1", "c2"]);
    let s = screen(&mut b, 120, 20);
    assert!(s.contains("↳ explore: find the parser"), "{s}");
    assert!(s.contains("sub-agent of “Fix the parser”"), "{s}");
    assert!(s.contains("sub-agent of zz99aa00"), "{s}");
}
