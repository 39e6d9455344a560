//! Grapheme clusters in the transcript: a ZWJ family, a flag, a keycap and
//! a VS16 heart are each drawn as one cell group (the whole cluster in one
//! cell, the columns after it left to the terminal), at a width that makes
//! the line wrap, and the wrap breaks between clusters, never inside one.

use ratatui::buffer::Buffer;

use crate::protocol::{AgentEvent, TurnOutcome};
use crate::tui::test_support::*;

const FAMILY: &str = "👨\u{200D}👩\u{200D}👧";
const FLAG: &str = "🇫🇷";
const KEYCAP: &str = "1\u{FE0F}\u{20E3}";
const HEART: &str = "\u{2764}\u{FE0F}";

fn drawn(text: &str, w: u16, h: u16) -> Buffer {
    let mut m = model();
    agent(
        &mut m,
        AgentEvent::TurnStarted {
            turn: 1,
            prompt: "show me".into(),
        },
    );
    agent(&mut m, AgentEvent::TextDelta(text.into()));
    agent(
        &mut m,
        AgentEvent::TurnFinished {
            turn: 1,
            outcome: TurnOutcome::Completed,
        },
    );
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(w, h)).expect("terminal");
    t.draw(|f| crate::tui::view::view(&mut m, f)).expect("draw");
    t.backend().buffer().clone()
}

/// The row of `buf` as the terminal shows it: each cell's symbol, and the
/// columns a wide cluster covers stepped over, as the flush does.
fn row_text(buf: &Buffer, y: u16) -> String {
    let mut out = String::new();
    let mut x = 0;
    while x < buf.area.width {
        let sym = buf[(x, y)].symbol();
        out.push_str(sym);
        x += crate::text::width(sym).max(1) as u16;
    }
    out
}

#[test]
fn each_cluster_is_one_cell_group_and_the_wrap_agrees() {
    let line =
        format!("ab {FAMILY} cd {FLAG} ef {KEYCAP} gh {HEART} ij {FAMILY}{FLAG}{KEYCAP}{HEART}");
    let (w, h) = (16, 14);
    let buf = drawn(&line, w, h);
    let mut found = Vec::new();
    for y in 0..h {
        for x in 0..w {
            let sym = buf[(x, y)].symbol();
            let cluster = [FAMILY, FLAG, KEYCAP, HEART]
                .into_iter()
                .find(|c| sym == *c);
            if let Some(c) = cluster {
                found.push(c);
                // Two columns wide, and the column after it holds nothing of
                // its own (the flush steps over it by the cluster's width):
                // the terminal draws the cluster over both.
                assert_eq!(crate::text::width(c), 2, "{c:?}");
                assert!(x + 1 < w, "{c:?} is cut at the right edge of row {y}");
                let next = buf[(x + 1, y)].symbol();
                assert!(next.trim().is_empty(), "{c:?} at {x},{y} then {next:?}");
            } else {
                // No cell holds a piece of a cluster.
                for part in ["\u{200D}", "\u{FE0F}", "\u{20E3}", "🇫", "👨", "👩", "👧"] {
                    assert!(
                        !sym.contains(part),
                        "a piece {part:?} of a cluster in cell {x},{y}: {sym:?}"
                    );
                }
            }
        }
    }
    let count = |c: &str| found.iter().filter(|f| **f == c).count();
    for c in [FAMILY, FLAG, KEYCAP, HEART] {
        assert_eq!(count(c), 2, "{c:?} drawn {} times, not twice", count(c));
    }
    // The wrap and the cells agree: the transcript's rows, cell by cell,
    // are the wrap of the line at the transcript's width, in order.
    let shown: String = (0..h).map(|y| row_text(&buf, y)).collect();
    let squeezed: String = shown.split_whitespace().collect();
    let want: String = line.split_whitespace().collect();
    assert!(squeezed.contains(&want), "{want:?} not in {shown:?}");
    let screen: Vec<String> = (0..h).map(|y| row_text(&buf, y)).collect();
    insta::assert_snapshot!("grapheme_clusters_16x14", screen.join("\n"));
}
