//! The real binary in a real pseudo-terminal, its screen parsed by a
//! terminal emulator, for end-to-end tests.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, MasterPty, NativePtySystem, PtySize, PtySystem};

pub struct PtyApp {
    child: Box<dyn Child + Send + Sync>,
    master: Box<dyn MasterPty + Send>,
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    parser: Arc<Mutex<vt100::Parser>>,
    /// Everything the program wrote, for diagnostics and OSC checks.
    raw: Arc<Mutex<Vec<u8>>>,
    /// Set when the reader has seen the end of the terminal's output.
    drained: Arc<std::sync::atomic::AtomicBool>,
}

/// What the emulated terminal answers beyond the usual: its background
/// colour (OSC 11) as `rgb:RRRR/GGGG/BBBB`, or nothing, as many terminals do.
#[derive(Debug, Clone, Default)]
pub struct Replies {
    pub background: Option<String>,
}

impl PtyApp {
    pub fn spawn(
        bin: &Path,
        args: &[&str],
        env: &[(String, String)],
        cwd: &Path,
        rows: u16,
        cols: u16,
    ) -> PtyApp {
        PtyApp::spawn_with(bin, args, env, cwd, (rows, cols), Replies::default())
    }

    /// As `spawn`, with the terminal answering as `replies` says.
    pub fn spawn_with(
        bin: &Path,
        args: &[&str],
        env: &[(String, String)],
        cwd: &Path,
        (rows, cols): (u16, u16),
        replies: Replies,
    ) -> PtyApp {
        let system = NativePtySystem::default();
        let pair = system
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("open a pty");
        let mut cmd = CommandBuilder::new(bin);
        cmd.args(args);
        cmd.cwd(cwd);
        cmd.env_clear();
        for key in ["PATH", "LANG", "LC_ALL"] {
            if let Ok(v) = std::env::var(key) {
                cmd.env(key, v);
            }
        }
        cmd.env("TERM", "xterm-256color");
        // Tests answer a dialog the moment it shows; the pause a person
        // gets is tested on its own (tui_prompt).
        cmd.env("CAIRN_DIALOG_PAUSE_MS", "0");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = pair.slave.spawn_command(cmd).expect("spawn in pty");
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("pty reader");
        let writer = Arc::new(Mutex::new(pair.master.take_writer().expect("pty writer")));
        let parser = Arc::new(Mutex::new(vt100::Parser::new(rows, cols, 0)));
        let raw = Arc::new(Mutex::new(Vec::new()));
        let drained = Arc::new(std::sync::atomic::AtomicBool::new(false));
        {
            let parser = parser.clone();
            let raw = raw.clone();
            let drained = drained.clone();
            let writer = writer.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 8192];
                loop {
                    match reader.read(&mut buf) {
                        Ok(0) | Err(_) => {
                            drained.store(true, std::sync::atomic::Ordering::SeqCst);
                            break;
                        }
                        Ok(n) => {
                            let chunk = &buf[..n];
                            parser.lock().unwrap().process(chunk);
                            raw.lock().unwrap().extend_from_slice(chunk);
                            answer_queries(chunk, &parser, &writer, &replies);
                        }
                    }
                }
            });
        }
        PtyApp {
            child,
            master: pair.master,
            writer,
            parser,
            raw,
            drained,
        }
    }

    pub fn send(&mut self, bytes: &[u8]) {
        let mut w = self.writer.lock().unwrap();
        w.write_all(bytes).expect("write to pty");
        w.flush().ok();
    }

    pub fn type_text(&mut self, text: &str) {
        for ch in text.chars() {
            let mut b = [0u8; 4];
            self.send(ch.encode_utf8(&mut b).as_bytes());
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    pub fn screen(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    /// The foreground colour of the first character of `needle` where it
    /// first appears on screen.
    pub fn fg_of(&self, needle: &str) -> Option<vt100::Color> {
        let parser = self.parser.lock().unwrap();
        let screen = parser.screen();
        let (rows, cols) = screen.size();
        for row in 0..rows {
            let line: String = (0..cols)
                .map(|c| {
                    screen
                        .cell(row, c)
                        .map_or(" ".to_string(), |x| x.contents().to_string())
                })
                .map(|s| if s.is_empty() { " ".to_string() } else { s })
                .collect();
            if let Some(at) = line.find(needle) {
                let col = line[..at].chars().count() as u16;
                return screen.cell(row, col).map(|c| c.fgcolor());
            }
        }
        None
    }

    /// The background colour of the first character of `needle` where it
    /// first appears on screen.
    pub fn bg_of(&self, needle: &str) -> Option<vt100::Color> {
        let parser = self.parser.lock().unwrap();
        let screen = parser.screen();
        let (rows, cols) = screen.size();
        for row in 0..rows {
            let line: String = (0..cols)
                .map(|c| {
                    screen
                        .cell(row, c)
                        .map_or(" ".to_string(), |x| x.contents().to_string())
                })
                .map(|s| if s.is_empty() { " ".to_string() } else { s })
                .collect();
            if let Some(at) = line.find(needle) {
                let col = line[..at].chars().count() as u16;
                return screen.cell(row, col).map(|c| c.bgcolor());
            }
        }
        None
    }

    /// Whether a row showing `needle` draws it in reverse video.
    pub fn inverse_row_containing(&self, needle: &str) -> bool {
        let parser = self.parser.lock().unwrap();
        let screen = parser.screen();
        let (rows, cols) = screen.size();
        (0..rows).any(|row| {
            let line: String = (0..cols)
                .map(|c| {
                    screen
                        .cell(row, c)
                        .map_or(" ".to_string(), |x| x.contents().to_string())
                })
                .map(|s| if s.is_empty() { " ".to_string() } else { s })
                .collect();
            line.find(needle).is_some_and(|at| {
                let col = line[..at].chars().count() as u16;
                screen.cell(row, col).is_some_and(|c| c.inverse())
            })
        })
    }

    /// The screen with its colours and attributes, as escape sequences.
    pub fn formatted(&self) -> Vec<u8> {
        self.parser.lock().unwrap().screen().contents_formatted()
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.process_id()
    }

    /// Bytes the program has written so far.
    pub fn output_len(&self) -> usize {
        self.raw.lock().unwrap().len()
    }

    pub fn raw_output(&self) -> Vec<u8> {
        self.raw.lock().unwrap().clone()
    }

    /// Waits until the screen satisfies `pred`; on timeout returns the
    /// screen as the error so the failure shows what was there.
    pub fn wait_for(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let s = self.screen();
            if pred(&s) {
                return s;
            }
            if Instant::now() > deadline {
                panic!("timed out waiting for {what}; the screen was:\n{s}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn wait_for_text(&self, needle: &str) -> String {
        self.wait_for(&format!("{needle:?}"), |s| s.contains(needle))
    }

    pub fn resize(&mut self, rows: u16, cols: u16) {
        self.master
            .resize(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("resize pty");
        self.parser
            .lock()
            .unwrap()
            .screen_mut()
            .set_size(rows, cols);
    }

    /// Presses Ctrl+C until cairn quits, at most five times: the first
    /// press may stop a turn, close a dialog or clear the prompt, and on an
    /// empty prompt the first arms and the second quits.
    pub fn ctrl_c_to_quit(&mut self) {
        for _ in 0..5 {
            self.send(b"\x03");
            let deadline = Instant::now() + Duration::from_millis(250);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = self.child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }

    /// Waits for the program to exit; kills it after the timeout. What it
    /// wrote last (the message after leaving the full screen) is read
    /// before this returns, for up to five seconds.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<u32> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                let drain = Instant::now() + Duration::from_secs(5);
                while !self.drained.load(std::sync::atomic::Ordering::SeqCst)
                    && Instant::now() < drain
                {
                    std::thread::sleep(Duration::from_millis(10));
                }
                return Some(status.exit_code());
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Answers what a real terminal answers: the cursor position (DSR), the
/// device attributes (DA1), which crossterm asks for at start-up,
/// whether synchronized output (DEC mode 2026) is supported (DECRQM), and
/// the background colour when `replies` has one (OSC 11).
fn answer_queries(
    chunk: &[u8],
    parser: &Arc<Mutex<vt100::Parser>>,
    writer: &Arc<Mutex<Box<dyn Write + Send>>>,
    replies: &Replies,
) {
    let find = |pat: &[u8]| chunk.windows(pat.len()).any(|w| w == pat);
    let mut reply = Vec::new();
    if let Some(bg) = &replies.background
        && find(b"\x1b]11;?")
    {
        reply.extend_from_slice(format!("\x1b]11;{bg}\x1b\\").as_bytes());
    }
    if find(b"\x1b[6n") {
        let (row, col) = parser.lock().unwrap().screen().cursor_position();
        reply.extend_from_slice(format!("\x1b[{};{}R", row + 1, col + 1).as_bytes());
    }
    if find(b"\x1b[?2026$p") {
        reply.extend_from_slice(b"\x1b[?2026;2$y");
    }
    if find(b"\x1b[c") || find(b"\x1b[0c") {
        reply.extend_from_slice(b"\x1b[?62;22c");
    }
    if !reply.is_empty() {
        let mut w = writer.lock().unwrap();
        let _ = w.write_all(&reply);
        let _ = w.flush();
    }
}

impl Drop for PtyApp {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
    }
}
