//! Answers the terminal sends after cairn stopped waiting for them.
//!
//! At start cairn asks the terminal for its background colour (OSC 11) and
//! waits half a second (`render::flush::probe`). Over a slow link the
//! answer, `ESC ] 11 ; rgb:…` ended by BEL or `ESC \`, arrives later and
//! reaches the key reader, which reads it as Alt+`]` followed by typed
//! characters: `11;rgb:0000/0000/0000` would appear in the prompt. For a
//! while after start such a sequence is recognised and dropped; anything
//! that turns out not to be one is passed on unchanged and in order.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use crossterm::event::{Event, EventStream, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use futures::{Stream, StreamExt};

/// crossterm's event stream, polled only when it has woken its reader.
///
/// Polling an `EventStream` takes its reader's lock with a zero timeout;
/// while its thread waits for input holding that lock, the try spins and
/// yields the thread several times and parks once, a dozen system calls.
/// The interface's loop is woken for every streamed delta, a couple of
/// hundred times a second, and polls every source each time: the stream
/// is handed a waker of its own and polled again only after it used it.
pub struct WokenStream<S = EventStream> {
    stream: S,
    flag: Arc<WakeFlag>,
    waker: Waker,
}

struct WakeFlag {
    woken: AtomicBool,
    task: Mutex<Option<Waker>>,
}

impl Wake for WakeFlag {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::SeqCst);
        if let Some(task) = self.task.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            task.wake_by_ref();
        }
    }
}

impl<S> WokenStream<S> {
    pub fn new(stream: S) -> WokenStream<S> {
        let flag = Arc::new(WakeFlag {
            woken: AtomicBool::new(true),
            task: Mutex::new(None),
        });
        WokenStream {
            stream,
            waker: Waker::from(flag.clone()),
            flag,
        }
    }
}

impl<S: Stream + Unpin> Stream for WokenStream<S> {
    type Item = S::Item;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        {
            // Whoever polls now is woken when input arrives: stored before
            // the flag is read, so a wake between the two is not lost.
            let mut task = this.flag.task.lock().unwrap_or_else(|p| p.into_inner());
            if !task.as_ref().is_some_and(|t| t.will_wake(cx.waker())) {
                *task = Some(cx.waker().clone());
            }
        }
        if !this.flag.woken.swap(false, Ordering::SeqCst) {
            return Poll::Pending;
        }
        let mut inner = Context::from_waker(&this.waker);
        match Pin::new(&mut this.stream).poll_next(&mut inner) {
            Poll::Ready(ev) => {
                // More may be queued behind it: poll again next time.
                this.flag.woken.store(true, Ordering::SeqCst);
                Poll::Ready(ev)
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

/// The terminal's events with late answers taken out: what every screen
/// reads its keys from.
pub struct LateFiltered {
    input: WokenStream,
    late: LateAnswers,
    ready: VecDeque<Event>,
}

impl LateFiltered {
    pub fn new(input: EventStream) -> LateFiltered {
        LateFiltered {
            input: WokenStream::new(input),
            late: LateAnswers::new(Instant::now()),
            ready: VecDeque::new(),
        }
    }

    /// A new reader of the terminal (after an editor had it), keeping what
    /// is held and the window since start.
    pub fn reopen(&mut self) {
        self.input = WokenStream::new(EventStream::new());
    }

    /// The next event, as `EventStream::next`. Safe to drop at any await:
    /// what was read is kept in `self`.
    pub async fn next(&mut self) -> Option<std::io::Result<Event>> {
        loop {
            if let Some(ev) = self.ready.pop_front() {
                return Some(Ok(ev));
            }
            let ev = if self.late.holding() {
                let until = tokio::time::Instant::from_std(self.late.deadline());
                match tokio::time::timeout_at(until, self.input.next()).await {
                    Ok(ev) => ev,
                    Err(_) => {
                        self.ready.extend(self.late.release());
                        continue;
                    }
                }
            } else {
                self.input.next().await
            };
            match ev {
                Some(Ok(ev)) => self.ready.extend(self.late.feed(ev, Instant::now())),
                other => return other,
            }
        }
    }
}

/// How long after start a late answer is still expected.
const WINDOW: Duration = Duration::from_secs(10);
/// The longest body an answer has (`11;rgba:ffff/ffff/ffff/ffff`, with room).
const MAX_BODY: usize = 48;
/// A held start that nothing follows is a key after all.
pub const PATIENCE: Duration = Duration::from_millis(100);

pub struct LateAnswers {
    until: Instant,
    held: Vec<Event>,
    body: String,
    last: Instant,
}

impl LateAnswers {
    pub fn new(now: Instant) -> LateAnswers {
        LateAnswers {
            until: now + WINDOW,
            held: Vec::new(),
            body: String::new(),
            last: now,
        }
    }

    /// Whether something is held back, waiting for what follows.
    pub fn holding(&self) -> bool {
        !self.held.is_empty()
    }

    /// When what is held is given up as keys.
    pub fn deadline(&self) -> Instant {
        self.last + PATIENCE
    }

    /// The events to act on now, given the next one from the terminal.
    pub fn feed(&mut self, ev: Event, now: Instant) -> Vec<Event> {
        self.last = now;
        if self.held.is_empty() {
            if now < self.until && is_start(&ev) {
                self.held.push(ev);
                return Vec::new();
            }
            return vec![ev];
        }
        if is_end(&ev) && self.body_is_answer() {
            self.held.clear();
            self.body.clear();
            return Vec::new();
        }
        match body_char(&ev) {
            Some(c) if self.body.len() < MAX_BODY && self.could_become_answer(c) => {
                self.body.push(c);
                self.held.push(ev);
                Vec::new()
            }
            _ => {
                let mut out = self.release();
                out.extend(self.feed(ev, now));
                out
            }
        }
    }

    /// What is held, as the keys it was, when nothing more came.
    pub fn release(&mut self) -> Vec<Event> {
        self.body.clear();
        std::mem::take(&mut self.held)
    }

    fn could_become_answer(&self, next: char) -> bool {
        let text = format!("{}{next}", self.body);
        let prefix = "11;";
        if text.len() <= prefix.len() {
            return prefix.starts_with(&text);
        }
        text.starts_with(prefix)
            && text[prefix.len()..]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == ':' || c == '/')
    }

    fn body_is_answer(&self) -> bool {
        self.body
            .strip_prefix("11;")
            .is_some_and(|rest| rest.starts_with("rgb") && rest.contains(':'))
    }
}

fn key(ev: &Event) -> Option<&KeyEvent> {
    match ev {
        Event::Key(k) if k.kind != KeyEventKind::Release => Some(k),
        _ => None,
    }
}

/// `ESC ]` reads as Alt+`]`.
fn is_start(ev: &Event) -> bool {
    key(ev).is_some_and(|k| k.code == KeyCode::Char(']') && k.modifiers == KeyModifiers::ALT)
}

/// BEL reads as Ctrl+G, `ESC \` as Alt+`\`.
fn is_end(ev: &Event) -> bool {
    key(ev).is_some_and(|k| {
        (k.code == KeyCode::Char('g') && k.modifiers == KeyModifiers::CONTROL)
            || (k.code == KeyCode::Char('\\') && k.modifiers == KeyModifiers::ALT)
    })
}

fn body_char(ev: &Event) -> Option<char> {
    let k = key(ev)?;
    match k.code {
        KeyCode::Char(c) if k.modifiers.difference(KeyModifiers::SHIFT).is_empty() => Some(c),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream that counts how often it is polled.
    struct Counted<S> {
        inner: S,
        polls: Arc<std::sync::atomic::AtomicUsize>,
    }

    impl<S: Stream + Unpin> Stream for Counted<S> {
        type Item = S::Item;
        fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
            self.polls.fetch_add(1, Ordering::SeqCst);
            Pin::new(&mut self.inner).poll_next(cx)
        }
    }

    struct CountWakes(std::sync::atomic::AtomicUsize);
    impl Wake for CountWakes {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn the_terminal_stream_is_polled_again_only_once_it_woke() {
        let (tx, rx) = futures::channel::mpsc::unbounded::<u32>();
        let polls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let mut s = WokenStream::new(Counted {
            inner: rx,
            polls: polls.clone(),
        });
        let wakes = Arc::new(CountWakes(Default::default()));
        let waker = Waker::from(wakes.clone());
        let mut cx = Context::from_waker(&waker);
        // The loop polls it for every other thing that woke it.
        for _ in 0..100 {
            assert!(Pin::new(&mut s).poll_next(&mut cx).is_pending());
        }
        assert_eq!(polls.load(Ordering::SeqCst), 1);
        // Input arrives: the task is woken and gets it, and what is queued
        // behind it.
        tx.unbounded_send(7).unwrap();
        tx.unbounded_send(8).unwrap();
        assert_eq!(wakes.0.load(Ordering::SeqCst), 1);
        assert_eq!(Pin::new(&mut s).poll_next(&mut cx), Poll::Ready(Some(7)));
        assert_eq!(Pin::new(&mut s).poll_next(&mut cx), Poll::Ready(Some(8)));
        assert!(Pin::new(&mut s).poll_next(&mut cx).is_pending());
        assert!(Pin::new(&mut s).poll_next(&mut cx).is_pending());
        assert_eq!(polls.load(Ordering::SeqCst), 4);
        // A task that polls it later is the one woken.
        let later = Arc::new(CountWakes(Default::default()));
        let later_waker = Waker::from(later.clone());
        assert!(
            Pin::new(&mut s)
                .poll_next(&mut Context::from_waker(&later_waker))
                .is_pending()
        );
        drop(tx);
        assert_eq!(later.0.load(Ordering::SeqCst), 1);
        assert_eq!(Pin::new(&mut s).poll_next(&mut cx), Poll::Ready(None));
    }

    fn events(bytes: &str) -> Vec<Event> {
        let mut out = Vec::new();
        let mut chars = bytes.chars().peekable();
        while let Some(c) = chars.next() {
            let (code, modifiers) = match c {
                '\x1b' => match chars.next() {
                    Some(n) => (KeyCode::Char(n), KeyModifiers::ALT),
                    None => (KeyCode::Esc, KeyModifiers::NONE),
                },
                '\x07' => (KeyCode::Char('g'), KeyModifiers::CONTROL),
                c => (KeyCode::Char(c), KeyModifiers::NONE),
            };
            out.push(Event::Key(KeyEvent::new(code, modifiers)));
        }
        out
    }

    fn run(filter: &mut LateAnswers, input: &str, at: Instant) -> Vec<Event> {
        let mut out = Vec::new();
        for ev in events(input) {
            out.extend(filter.feed(ev, at));
        }
        out
    }

    #[test]
    fn a_late_background_answer_is_dropped_with_either_ending() {
        let now = Instant::now();
        let mut f = LateAnswers::new(now);
        assert!(run(&mut f, "\x1b]11;rgb:0000/0000/0000\x1b\\", now).is_empty());
        assert!(run(&mut f, "\x1b]11;rgb:ffff/ffff/ffff\x07", now).is_empty());
        assert_eq!(run(&mut f, "ab", now), events("ab"));
        assert!(!f.holding());
    }

    #[test]
    fn keys_that_only_begin_like_an_answer_come_through_in_order() {
        let now = Instant::now();
        let mut f = LateAnswers::new(now);
        assert_eq!(run(&mut f, "\x1b]12x", now), events("\x1b]12x"));
        let held = run(&mut f, "\x1b]1", now);
        assert!(held.is_empty() && f.holding());
        assert_eq!(f.release(), events("\x1b]1"));
        // An answer's shape with no ending is keys too.
        assert_eq!(
            run(&mut f, "\x1b]11;rgb:00 x", now),
            events("\x1b]11;rgb:00 x")
        );
    }

    #[test]
    fn after_the_window_nothing_is_held() {
        let now = Instant::now();
        let mut f = LateAnswers::new(now);
        let later = now + WINDOW + Duration::from_millis(1);
        let input = "\x1b]11;rgb:0000/0000/0000\x07";
        assert_eq!(run(&mut f, input, later), events(input));
    }
}
