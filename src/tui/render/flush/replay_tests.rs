//! The bytes the flush writes, replayed through a terminal emulator
//! (`vt100`), must leave exactly the frame ratatui drew — cell by cell,
//! with colours and attributes — after every frame of a long seeded run
//! of streaming, scrolling back, overlays and resizes.

use ratatui::Terminal;
use ratatui::buffer::Buffer;
use ratatui::layout::{Rect, Size};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::{FlushBackend, FlushOptions, draw};

/// A small deterministic generator (xorshift), so a failure replays.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const WORDS: &[&str] = &[
    "parser",
    "reads",
    "**tokens**",
    "`node`",
    "tree",
    "span",
    "字符",
    "—",
    "errors",
    "source",
    "fn",
    "wrap",
    "emoji🙂",
    "x",
];

/// A screen shaped like cairn's: a transcript that streams and can be
/// scrolled back, a status line, an input line, and an overlay.
struct Scene {
    lines: Vec<Line<'static>>,
    back: usize,
    overlay: bool,
    tick: u64,
}

impl Scene {
    fn stream(&mut self, rng: &mut Rng) {
        let word = WORDS[rng.below(WORDS.len() as u64) as usize];
        let style = match rng.below(6) {
            0 => Style::default()
                .fg(Color::Cyan)
                .add_modifier(Modifier::BOLD),
            1 => Style::default().bg(Color::Indexed(236)),
            2 => Style::default()
                .fg(Color::Rgb(200, 120, 40))
                .add_modifier(Modifier::ITALIC),
            3 => Style::default().add_modifier(Modifier::UNDERLINED | Modifier::DIM),
            _ => Style::default(),
        };
        let last = self.lines.last_mut().expect("a line");
        if last.width() > 50 || rng.below(9) == 0 {
            self.lines
                .push(Line::from(vec![Span::styled(word.to_string(), style)]));
            if rng.below(4) == 0 {
                self.lines.push(Line::default());
            }
        } else {
            last.spans.push(Span::raw(" "));
            last.spans.push(Span::styled(word.to_string(), style));
        }
    }

    fn draw(&self, f: &mut ratatui::Frame) {
        let area = f.area();
        let rows = area.height.saturating_sub(2);
        let end = self.lines.len().saturating_sub(self.back);
        let start = end.saturating_sub(rows as usize);
        let text: Vec<Line> = self.lines[start..end].to_vec();
        f.render_widget(Paragraph::new(text), Rect::new(0, 0, area.width, rows));
        let status = format!(
            " streaming · {} lines · tick {}",
            self.lines.len(),
            self.tick
        );
        let bar = Paragraph::new(status).style(Style::default().bg(Color::Blue).fg(Color::White));
        f.render_widget(bar, Rect::new(0, rows, area.width, 1.min(area.height)));
        if area.height > rows + 1 {
            f.render_widget(
                Paragraph::new("> ask cairn"),
                Rect::new(0, rows + 1, area.width, 1),
            );
            f.set_cursor_position((11.min(area.width.saturating_sub(1)), rows + 1));
        }
        if self.overlay && area.width > 10 && area.height > 6 {
            let r = Rect::new(
                area.width / 4,
                area.height / 4,
                area.width / 2,
                area.height / 2,
            );
            f.render_widget(Clear, r);
            let block = Block::default().borders(Borders::ALL).title(" Commands ");
            let body = Paragraph::new("new session\nsessions…\nhelp").block(block);
            f.render_widget(body, r);
        }
    }
}

fn vt_color(c: Color) -> vt100::Color {
    let idx = |i: u8| vt100::Color::Idx(i);
    match c {
        Color::Reset => vt100::Color::Default,
        Color::Black => idx(0),
        Color::Red => idx(1),
        Color::Green => idx(2),
        Color::Yellow => idx(3),
        Color::Blue => idx(4),
        Color::Magenta => idx(5),
        Color::Cyan => idx(6),
        Color::Gray => idx(7),
        Color::DarkGray => idx(8),
        Color::LightRed => idx(9),
        Color::LightGreen => idx(10),
        Color::LightYellow => idx(11),
        Color::LightBlue => idx(12),
        Color::LightMagenta => idx(13),
        Color::LightCyan => idx(14),
        Color::White => idx(15),
        Color::Indexed(i) => idx(i),
        Color::Rgb(r, g, b) => vt100::Color::Rgb(r, g, b),
    }
}

/// vt100 keeps one intensity, bold or dim, where a terminal may show both:
/// the last one set wins there.
fn intensity_matches(got: &vt100::Cell, m: Modifier) -> bool {
    let both = Modifier::BOLD | Modifier::DIM;
    if m.contains(both) {
        got.bold() || got.dim()
    } else {
        got.bold() == m.contains(Modifier::BOLD) && got.dim() == m.contains(Modifier::DIM)
    }
}

/// Every cell of `want` as the emulator shows it; the first difference.
pub(super) fn first_difference(want: &Buffer, screen: &vt100::Screen) -> Option<String> {
    let area = want.area;
    for y in 0..area.height {
        let mut skip = 0;
        for x in 0..area.width {
            let cell = &want[(x, y)];
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let width = unicode_width::UnicodeWidthStr::width(cell.symbol());
            skip = width.saturating_sub(1);
            let Some(got) = screen.cell(y, x) else {
                return Some(format!("no cell at {x},{y}"));
            };
            let text = if got.contents().is_empty() {
                " "
            } else {
                got.contents()
            };
            let m = cell.modifier;
            // A blank shows its background only: the pen's other colours
            // and attributes on it are not seen.
            let blank = super::encode::is_blank(cell);
            let same = if blank {
                text == " "
                    && got.bgcolor() == vt_color(cell.bg)
                    && !got.underline()
                    && !got.inverse()
            } else {
                text == cell.symbol()
                    && got.fgcolor() == vt_color(cell.fg)
                    && got.bgcolor() == vt_color(cell.bg)
                    && intensity_matches(got, m)
                    && got.italic() == m.contains(Modifier::ITALIC)
                    && got.underline() == m.contains(Modifier::UNDERLINED)
                    && got.inverse() == m.contains(Modifier::REVERSED)
            };
            if !same {
                return Some(format!(
                    "at {x},{y}: want {cell:?}, the emulator has {got:?}"
                ));
            }
        }
    }
    None
}

/// Runs the seeded scene, checking the emulator after every frame; returns
/// the bytes written.
fn replay(seed: u64, options: FlushOptions, frames: usize) -> usize {
    let mut rng = Rng(seed);
    let (mut w, mut h) = (120u16, 40u16);
    let backend = FlushBackend::with_size(Vec::new(), options, Size::new(w, h));
    let mut term = Terminal::new(backend).expect("terminal");
    let mut vt = vt100::Parser::new(h, w, 0);
    let mut scene = Scene {
        lines: vec![Line::default()],
        back: 0,
        overlay: false,
        tick: 0,
    };
    let mut total = 0;
    for frame in 0..frames {
        for _ in 0..rng.below(12) {
            scene.stream(&mut rng);
        }
        scene.tick += 1;
        match rng.below(40) {
            0 => scene.overlay = !scene.overlay,
            1 => scene.back = (scene.back + 1 + rng.below(15) as usize).min(scene.lines.len()),
            2 | 3 => scene.back = scene.back.saturating_sub(1 + rng.below(4) as usize),
            4 => {
                (w, h) = (20 + rng.below(110) as u16, 5 + rng.below(40) as u16);
                term.backend_mut().set_size(Size::new(w, h));
                vt.screen_mut().set_size(h, w);
            }
            _ => {}
        }
        draw(&mut term, |f| scene.draw(f)).expect("draw");
        let want = term.backend().frame().clone();
        let bytes = std::mem::take(term.backend_mut().writer_mut());
        total += bytes.len();
        vt.process(&bytes);
        if let Some(diff) = first_difference(&want, vt.screen()) {
            panic!("seed {seed}, frame {frame} ({w}x{h}): {diff}");
        }
        // The row hashes kept (only changed rows hashed again) are those
        // of the whole frame.
        if options.scroll_regions {
            let mut full = Vec::new();
            super::scroll::row_hashes(&want, &mut full);
            assert_eq!(
                term.backend().shown_rows,
                full,
                "seed {seed}, frame {frame}: kept row hashes"
            );
        }
    }
    total
}

#[test]
fn the_emulator_shows_every_frame_exactly_with_scroll_regions() {
    let on = FlushOptions {
        scroll_regions: true,
        synchronized: true,
    };
    let off = FlushOptions {
        scroll_regions: false,
        synchronized: false,
    };
    for seed in [1, 7, 2026] {
        let with = replay(seed, on, 600);
        let without = replay(seed, off, 600);
        assert!(
            with < without,
            "seed {seed}: scroll regions should write less ({with} vs {without} bytes)"
        );
    }
}

#[test]
fn a_frame_with_nothing_new_writes_nothing() {
    let options = FlushOptions {
        scroll_regions: true,
        synchronized: true,
    };
    let backend = FlushBackend::with_size(Vec::new(), options, Size::new(30, 6));
    let mut term = Terminal::new(backend).expect("terminal");
    let paint = |f: &mut ratatui::Frame| f.render_widget(Paragraph::new("hello"), f.area());
    draw(&mut term, paint).expect("draw");
    let first = std::mem::take(term.backend_mut().writer_mut());
    assert!(first.starts_with(b"\x1b[?2026h") && first.ends_with(b"\x1b[?2026l"));
    draw(&mut term, paint).expect("draw");
    assert!(term.backend().writer().is_empty());
}

#[test]
fn streaming_a_line_writes_only_its_new_tail() {
    let options = FlushOptions {
        scroll_regions: true,
        synchronized: false,
    };
    let backend = FlushBackend::with_size(Vec::new(), options, Size::new(60, 4));
    let mut term = Terminal::new(backend).expect("terminal");
    let mut text = String::from("The parser reads tokens");
    draw(&mut term, |f| {
        f.render_widget(Paragraph::new(text.clone()), f.area())
    })
    .expect("draw");
    term.backend_mut().writer_mut().clear();
    text.push_str(" one by one");
    draw(&mut term, |f| {
        f.render_widget(Paragraph::new(text.clone()), f.area())
    })
    .expect("draw");
    let bytes = String::from_utf8(term.backend().writer().clone()).expect("utf-8");
    assert_eq!(bytes, " one by one");
}

/// The real screen: cairn's own view of a model streaming a long markdown
/// answer, with the person scrolling back and forth, opening the palette
/// and the help, and the terminal resized, all in a seeded order.
#[test]
fn the_emulator_shows_cairns_own_screen_exactly_while_it_streams() {
    use crate::protocol::AgentEvent;
    use crate::tui::msg::Msg;
    use crate::tui::test_support::{agent, ctrl, key, model};
    use crate::tui::update::update;
    use crossterm::event::KeyCode;

    let mut rng = Rng(17);
    let mut m = model();
    let (mut w, mut h) = (120u16, 40u16);
    let options = FlushOptions {
        scroll_regions: true,
        synchronized: true,
    };
    let mut term = Terminal::new(FlushBackend::with_size(
        Vec::new(),
        options,
        Size::new(w, h),
    ))
    .expect("terminal");
    let mut vt = vt100::Parser::new(h, w, 0);
    agent(
        &mut m,
        AgentEvent::TurnStarted {
            turn: 1,
            prompt: "explain the parser".into(),
        },
    );
    agent(&mut m, AgentEvent::ResponseStarted);
    let mut text = String::new();
    for n in 1..=30 {
        text.push_str(&format!("## Section {n}\n\nThe parser reads **tokens** one by one and builds a tree; each `node` keeps its span — 字符 too.\n\n- point {n}\n- `code`\n\n```rust\nfn s{n}() -> usize {{ {n} }}\n```\n\n"));
    }
    let chars: Vec<char> = text.chars().collect();
    let mut at = 0;
    let mut frame = 0;
    while at < chars.len() {
        let n = (1 + rng.below(60) as usize).min(chars.len() - at);
        let chunk: String = chars[at..at + n].iter().collect();
        at += n;
        agent(&mut m, AgentEvent::TextDelta(chunk));
        let msg = match rng.below(30) {
            0 => Some(key(KeyCode::PageUp)),
            1 => Some(key(KeyCode::PageDown)),
            2 => Some(key(KeyCode::End)),
            3 => Some(ctrl('p')),
            4 => Some(key(KeyCode::Esc)),
            5 => {
                (w, h) = (30 + rng.below(100) as u16, 8 + rng.below(36) as u16);
                term.backend_mut().set_size(Size::new(w, h));
                vt.screen_mut().set_size(h, w);
                Some(Msg::Resize {
                    width: w,
                    height: h,
                })
            }
            _ => None,
        };
        if let Some(msg) = msg {
            update(&mut m, msg);
        }
        draw(&mut term, |f| crate::tui::view::view(&mut m, f)).expect("draw");
        let want = term.backend().frame().clone();
        let bytes = std::mem::take(term.backend_mut().writer_mut());
        vt.process(&bytes);
        if let Some(diff) = first_difference(&want, vt.screen()) {
            panic!("frame {frame} ({w}x{h}): {diff}");
        }
        frame += 1;
    }
    assert!(frame > 100, "only {frame} frames");
}
