//! Finding the rows that moved between what the terminal shows and what
//! the next frame wants, so the terminal can move them itself (a scroll
//! region and `CSI n S` / `CSI n T`) instead of being sent them again.
//!
//! Rows are compared by hash. A wrong guess costs bytes, never
//! correctness: the shown record is shifted exactly as the terminal shifts
//! its screen, and the cell diff that follows repairs every difference.

use std::hash::{Hash, Hasher};

use ratatui::buffer::{Buffer, Cell};

/// Scroll the rows `top..=bottom` by `lines`: up (`CSI n S`, content moves
/// towards the top, blank rows enter at the bottom) or down (`CSI n T`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scroll {
    pub top: u16,
    pub bottom: u16,
    pub lines: u16,
    pub up: bool,
}

impl Scroll {
    /// The bytes that make the terminal do it, leaving no region set.
    pub fn sequence(&self) -> String {
        let dir = if self.up { 'S' } else { 'T' };
        format!(
            "\x1b[{};{}r\x1b[{}{dir}\x1b[r",
            self.top + 1,
            self.bottom + 1,
            self.lines
        )
    }

    /// Does to a list of row hashes what the terminal does to its rows.
    #[cfg(test)]
    pub fn apply_rows(&self, rows: &mut [u64], blank: u64) {
        let (top, bottom, n) = (self.top as usize, self.bottom as usize, self.lines as usize);
        let rows = &mut rows[top..=bottom];
        if self.up {
            rows.rotate_left(n);
            let len = rows.len();
            rows[len - n..].fill(blank);
        } else {
            rows.rotate_right(n);
            rows[..n].fill(blank);
        }
    }

    /// Does to `buf` what the terminal does to its screen.
    pub fn apply(&self, buf: &mut Buffer) {
        let width = buf.area.width as usize;
        let (top, bottom, n) = (self.top as usize, self.bottom as usize, self.lines as usize);
        let rows = &mut buf.content[top * width..(bottom + 1) * width];
        if self.up {
            rows.rotate_left(n * width);
            let len = rows.len();
            rows[len - n * width..].fill(Cell::EMPTY);
        } else {
            rows.rotate_right(n * width);
            rows[..n * width].fill(Cell::EMPTY);
        }
    }
}

/// A fast, non-cryptographic hash: rows are compared many times a second
/// and a collision only costs a scroll that saves less.
struct RowHasher(u64);

impl RowHasher {
    fn add(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for RowHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(b));
        }
    }
    fn write_u8(&mut self, v: u8) {
        self.add(u64::from(v));
    }
    fn write_u16(&mut self, v: u16) {
        self.add(u64::from(v));
    }
    fn write_u32(&mut self, v: u32) {
        self.add(u64::from(v));
    }
    fn write_u64(&mut self, v: u64) {
        self.add(v);
    }
    fn write_usize(&mut self, v: usize) {
        self.add(v as u64);
    }
}

/// One hash per row of `buf`, into `out`.
pub fn row_hashes(buf: &Buffer, out: &mut Vec<u64>) {
    out.clear();
    let width = buf.area.width as usize;
    if width == 0 {
        return;
    }
    out.extend(buf.content.chunks(width).map(hash_cells));
}

/// The hash of row `y` of `buf`, as [`row_hashes`] gives it.
pub fn row_hash(buf: &Buffer, y: usize) -> u64 {
    hash_cells(row(buf, y))
}

fn hash_cells(row: &[Cell]) -> u64 {
    let mut h = RowHasher(0);
    row.hash(&mut h);
    h.finish()
}

/// The hash of a blank row `width` wide.
pub fn blank_row_hash(width: u16) -> u64 {
    let mut h = RowHasher(0);
    vec![Cell::EMPTY; width as usize].hash(&mut h);
    h.finish()
}

/// Fewer rows saved than this is not worth a scroll.
const MIN_GAIN: i64 = 2;

/// The scroll that saves the most rows from being sent again, if any
/// saves enough, from the row hashes of what is shown (`s`) and what is
/// wanted (`w`), screens of the same size.
pub fn find(s: &[u64], w: &[u64], blank: u64) -> Option<Scroll> {
    let h = w.len();
    if s.len() != h || h < 3 {
        return None;
    }
    // changed[r]: row r must be sent if nothing scrolls.
    // kept[r]: row r is already right and not blank; blanking it costs it.
    let mut changed = vec![0i64; h + 1];
    let mut kept = vec![0i64; h + 1];
    for r in 0..h {
        changed[r + 1] = changed[r] + i64::from(w[r] != s[r]);
        kept[r + 1] = kept[r] + i64::from(w[r] == s[r] && w[r] != blank);
    }
    let sum = |p: &[i64], a: usize, b: usize| p[b + 1] - p[a];
    let mut best: Option<(i64, Scroll)> = None;
    for k in 1..h - 1 {
        for up in [true, false] {
            // Destination rows r whose content is the shown row r+k (up) or
            // r-k (down), in runs.
            let matches = |r: usize| {
                if up {
                    r + k < h && w[r] == s[r + k]
                } else {
                    r >= k && w[r] == s[r - k]
                }
            };
            let mut r = 0;
            while r < h {
                if !matches(r) {
                    r += 1;
                    continue;
                }
                let a = r;
                while r < h && matches(r) {
                    r += 1;
                }
                let b = r - 1;
                let (top, bottom, blanked) = if up {
                    (a, b + k, (b + 1, b + k))
                } else {
                    (a - k, b, (a - k, a - 1))
                };
                let gain = sum(&changed, a, b) - sum(&kept, blanked.0, blanked.1);
                if gain >= MIN_GAIN && best.is_none_or(|(g, _)| gain > g) {
                    let scroll = Scroll {
                        top: top as u16,
                        bottom: bottom as u16,
                        lines: k as u16,
                        up,
                    };
                    best = Some((gain, scroll));
                }
            }
        }
    }
    best.map(|(_, s)| s)
}

/// Row `y` of `buf`.
fn row(buf: &Buffer, y: usize) -> &[Cell] {
    let width = buf.area.width as usize;
    &buf.content[y * width..(y + 1) * width]
}

fn cells_differing(a: &[Cell], b: &[Cell]) -> usize {
    a.iter().zip(b).filter(|(x, y)| x != y).count()
}

/// The rows just below an upward scroll region may hold a line that
/// changed only at its end (the line being streamed, now one row higher
/// and a few characters longer): moving it with the rest costs its new
/// tail instead of the whole line. Grows the region down while that
/// writes fewer cells. Each of the rows concerned (at most 2k, k the lines
/// scrolled) is compared at most three ways, and only in a frame that
/// scrolls.
pub fn extend_bottom(scroll: Scroll, shown: &Buffer, want: &Buffer) -> Scroll {
    let h = want.area.height as usize;
    let (k, bottom) = (scroll.lines as usize, scroll.bottom as usize);
    if !scroll.up {
        return scroll;
    }
    let last_match = bottom - k;
    let max_bottom = (bottom + k).min(h - 1);
    // For each row d below the matched ones, the cells to write if it ends
    // up holding the shown row d + k (inside the region, moved up), a
    // blank (inside the region, scrolled in) or the shown row d (below it).
    let rows: Vec<(usize, usize, usize)> = (last_match + 1..=max_bottom)
        .map(|d| {
            let now = row(want, d);
            let moved = if d + k <= max_bottom {
                cells_differing(now, row(shown, d + k))
            } else {
                0
            };
            let blanked = now.iter().filter(|c| **c != Cell::EMPTY).count();
            (moved, blanked, cells_differing(now, row(shown, d)))
        })
        .collect();
    let cost = |region_bottom: usize| -> usize {
        rows.iter()
            .enumerate()
            .map(|(i, &(moved, blanked, stays))| {
                let d = last_match + 1 + i;
                if d + k <= region_bottom {
                    moved
                } else if d <= region_bottom {
                    blanked
                } else {
                    stays
                }
            })
            .sum()
    };
    let best = (bottom..=max_bottom).min_by_key(|&b| (cost(b), b));
    Scroll {
        bottom: best.unwrap_or(bottom) as u16,
        ..scroll
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::layout::Rect;

    fn find_in(shown: &Buffer, want: &Buffer) -> Option<Scroll> {
        let (mut s, mut w) = (Vec::new(), Vec::new());
        row_hashes(shown, &mut s);
        row_hashes(want, &mut w);
        let blank = blank_row_hash(want.area.width);
        let found = find(&s, &w, blank);
        if let Some(scroll) = found {
            // The hashes move as the rows do.
            let mut moved = shown.clone();
            scroll.apply(&mut moved);
            scroll.apply_rows(&mut s, blank);
            let mut again = Vec::new();
            row_hashes(&moved, &mut again);
            assert_eq!(s, again);
        }
        found
    }

    fn screen(lines: &[&str]) -> Buffer {
        let width = lines.iter().map(|l| l.len()).max().unwrap_or(1) as u16;
        let mut buf = Buffer::empty(Rect::new(0, 0, width, lines.len() as u16));
        for (y, l) in lines.iter().enumerate() {
            buf.set_string(0, y as u16, l, ratatui::style::Style::default());
        }
        buf
    }

    #[test]
    fn a_transcript_that_moved_up_two_lines_scrolls_above_the_input() {
        let shown = screen(&["one", "two", "thr", "fou", "fiv", "six", "---", "in>"]);
        let want = screen(&["thr", "fou", "fiv", "six", "sev", "eig", "---", "in>"]);
        let scroll = find_in(&shown, &want).unwrap();
        assert_eq!(
            scroll,
            Scroll {
                top: 0,
                bottom: 5,
                lines: 2,
                up: true
            }
        );
        let mut moved = shown.clone();
        scroll.apply(&mut moved);
        assert_eq!(
            moved,
            screen(&["thr", "fou", "fiv", "six", "", "", "---", "in>"])
        );
        assert_eq!(scroll.sequence(), "\x1b[1;6r\x1b[2S\x1b[r");
    }

    #[test]
    fn scrolling_back_scrolls_down() {
        let shown = screen(&["top", "c", "d", "e", "f", "g", "bar"]);
        let want = screen(&["top", "a", "b", "c", "d", "e", "bar"]);
        let scroll = find_in(&shown, &want).unwrap();
        assert_eq!(
            (scroll.top, scroll.bottom, scroll.lines, scroll.up),
            (1, 5, 2, false)
        );
        let mut moved = shown.clone();
        scroll.apply(&mut moved);
        assert_eq!(moved, screen(&["top", "", "", "c", "d", "e", "bar"]));
    }

    /// What `extend_bottom` must choose, found the slow way: every region
    /// bottom costed by comparing whole rows.
    fn extend_bottom_by_hand(scroll: Scroll, shown: &Buffer, want: &Buffer) -> Scroll {
        let h = want.area.height as usize;
        let (k, bottom) = (scroll.lines as usize, scroll.bottom as usize);
        let last_match = bottom - k;
        let max_bottom = (bottom + k).min(h - 1);
        let blank = vec![Cell::EMPTY; want.area.width as usize];
        let cost = |b: usize| -> usize {
            (last_match + 1..=max_bottom)
                .map(|d| {
                    let now = row(want, d);
                    if d + k <= b {
                        cells_differing(now, row(shown, d + k))
                    } else if d <= b {
                        cells_differing(now, &blank)
                    } else {
                        cells_differing(now, row(shown, d))
                    }
                })
                .sum()
        };
        let best = (bottom..=max_bottom).min_by_key(|&b| (cost(b), b));
        Scroll {
            bottom: best.unwrap_or(bottom) as u16,
            ..scroll
        }
    }

    #[test]
    fn the_region_grows_down_exactly_where_it_writes_least() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let words = [
            "ab",
            "abc",
            "",
            "x y",
            "streamed line",
            "streamed line and more",
        ];
        let mut grew = 0;
        for _ in 0..400 {
            let h = 4 + next(12) as usize;
            let rows = |next: &mut dyn FnMut(u64) -> u64| -> Vec<&str> {
                (0..h)
                    .map(|_| words[next(words.len() as u64) as usize])
                    .collect()
            };
            let (s, w) = (rows(&mut next), rows(&mut next));
            // Both as wide as the widest word, whatever rows they got.
            let (mut s2, mut w2) = (s.clone(), w.clone());
            s2.push("streamed line and more");
            w2.push("streamed line and more");
            let (mut shown, mut want) = (screen(&s2), screen(&w2));
            let area = Rect::new(0, 0, shown.area.width, h as u16);
            shown.resize(area);
            want.resize(area);
            let k = 1 + next(h as u64 / 2) as usize;
            let bottom = k + next((h - k) as u64) as usize;
            let scroll = Scroll {
                top: 0,
                bottom: bottom as u16,
                lines: k as u16,
                up: true,
            };
            let got = extend_bottom(scroll, &shown, &want);
            assert_eq!(
                got,
                extend_bottom_by_hand(scroll, &shown, &want),
                "{s:?} -> {w:?}"
            );
            grew += usize::from(got.bottom > scroll.bottom);
        }
        assert!(grew > 10, "the region grew only {grew} times");
    }

    #[test]
    fn nothing_moved_or_everything_changed_means_no_scroll() {
        let a = screen(&["a", "b", "c", "d"]);
        assert_eq!(find_in(&a, &a), None);
        let b = screen(&["w", "x", "y", "z"]);
        assert_eq!(find_in(&a, &b), None);
    }
}
