//! Draws the model. Fills layout caches; does no I/O.

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};

use crate::text::fit as truncate;
use crate::tools::state::TodoStatus;
use crate::tui::model::{Focus, Model};
use crate::tui::widgets::cell::RenderCtx;
use crate::tui::widgets::{overlay, slash_menu, status_bar};
use crate::tui::wrap::wrap_plain;

const MAX_TODO_ROWS: usize = 6;
const MAX_QUEUED_ROWS: usize = 2;

pub fn view(model: &mut Model, frame: &mut Frame) {
    let area = frame.area();
    if area.width == 0 || area.height == 0 {
        return;
    }
    let todos = todo_lines(model, area);
    let mut queued = queued_lines(model, area);
    queued.extend(picture_line(model, area));
    let input_h = model.input.height(area.width).min((area.height / 2).max(2));
    let [main, todo_area, queue_area, input_area, status_area] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(todos.len() as u16),
        Constraint::Length(queued.len() as u16),
        Constraint::Length(input_h),
        Constraint::Length(1),
    ])
    .areas(area);

    let buf = frame.buffer_mut();
    // The theme's background behind every cell, not only behind glyphs
    // (nothing to do for a theme that keeps the terminal's own colours).
    if !crate::tui::styles::is_terminal_default(model.styles.text) {
        buf.set_style(area, model.styles.text);
    }
    if model.transcript.is_empty() {
        draw_welcome(model, main, buf);
    } else {
        let ctx = RenderCtx {
            theme: &model.theme,
            styles: &model.styles,
            now: model.now,
        };
        model.transcript.render(main, buf, &ctx);
    }
    for (i, l) in todos.iter().enumerate() {
        buf.set_line(todo_area.x, todo_area.y + i as u16, l, todo_area.width);
    }
    for (i, l) in queued.iter().enumerate() {
        buf.set_line(queue_area.x, queue_area.y + i as u16, l, queue_area.width);
    }
    draw_input(model, input_area, buf);
    draw_status(model, status_area, buf);
    let dialog_area = if area.width < 60 || area.height < 20 {
        area
    } else {
        main
    };
    draw_slash_menu(model, main, input_area, buf);
    let (styles, theme, keys) = (&model.styles, &model.theme, &model.keys);
    model
        .modals
        .render(area, dialog_area, buf, styles, theme, keys);
    crate::tui::theme::contrast::keep_legible(buf, model.terminal.background);
}

/// The `/` menu, while the prompt has the keys and a `/…` offers any.
fn draw_slash_menu(model: &Model, main: Rect, input_area: Rect, buf: &mut Buffer) {
    if model.focus != Focus::Prompt || !model.modals.is_empty() {
        return;
    }
    let Some(menu) = crate::tui::slash::menu(model) else {
        return;
    };
    let selected = model.slash_menu.selected;
    overlay::draw(buf, main, model.styles.text, |b| {
        slash_menu::render(&menu, selected, input_area, main, b, &model.styles);
    });
}

/// Prompts waiting for the running turn, one line each.
fn queued_lines(model: &Model, area: Rect) -> Vec<Line<'static>> {
    model
        .queued
        .iter()
        .take(MAX_QUEUED_ROWS)
        .map(|q| {
            let first = q.lines().next().unwrap_or_default();
            Line::from(Span::styled(
                truncate(&format!("  queued: {first}"), area.width as usize),
                model.styles.dim,
            ))
        })
        .collect()
}

/// The pictures waiting to go with the next prompt, as chips.
fn picture_line(model: &Model, area: Rect) -> Option<Line<'static>> {
    if model.images.is_empty() {
        return None;
    }
    let chips = crate::tui::update::picture_chips(model).join(" ");
    Some(Line::from(Span::styled(
        truncate(&format!("  {chips}"), area.width as usize),
        model.styles.accent,
    )))
}

/// The empty transcript: a line on what to do, or the set-up help.
fn draw_welcome(model: &Model, main: Rect, buf: &mut Buffer) {
    let text = model
        .first_run_help
        .clone()
        .unwrap_or_else(|| "cairn — describe what you want done. F1 lists the keys.".to_string());
    let style = if model.first_run_help.is_some() {
        model.styles.text
    } else {
        model.styles.dim
    };
    let inner = Rect {
        x: main.x + 2,
        width: main.width.saturating_sub(2),
        ..main
    };
    for (i, l) in wrap_plain(&text, inner.width.max(1), style)
        .iter()
        .take(inner.height as usize)
        .enumerate()
    {
        buf.set_line(inner.x, inner.y + i as u16, l, inner.width);
    }
}

fn draw_input(model: &mut Model, area: Rect, buf: &mut Buffer) {
    let title = match &model.flash {
        Some((text, _)) => Some(Line::from(Span::styled(
            format!(" {text} "),
            model.styles.warning,
        ))),
        None if model.shell_mode && model.focus == Focus::Prompt => Some(Line::from(Span::styled(
            " ! shell: Enter runs the line in the sandbox, its output goes with your next prompt; ! alone leaves ",
            model.styles.warning,
        ))),
        None if model.focus == Focus::Transcript => Some(Line::from(Span::styled(
            " transcript: j/k select · Enter expand · y copy · c code · Tab back ",
            model.styles.accent,
        ))),
        None => None,
    };
    let focused = model.focus == Focus::Prompt && model.modals.is_empty();
    model.input.render(area, buf, &model.styles, title, focused);
}

fn draw_status(model: &Model, area: Rect, buf: &mut Buffer) {
    let status = status_bar::StatusInfo {
        styles: &model.styles,
        provider: &model.provider,
        model: &model.model,
        effort: model.effort,
        mode: model.mode,
        usage: &model.usage,
        cwd: &model.cwd,
        git_branch: model.git_branch.as_deref(),
        activity: &model.activity,
        now: model.now,
        mouse_captured: model.mouse_captured,
        holds_lone_esc: model.terminal.holds_lone_esc,
        store_warning: model.store_warning.as_deref(),
        servers: model.servers,
        language_servers: &model.language_servers,
        sandbox: &model.sandbox,
        read_only: model.read_only,
        jobs_running: crate::tui::jobs::running(model),
    };
    status_bar::render(&status, area, buf);
}

fn todo_lines(model: &Model, area: Rect) -> Vec<Line<'static>> {
    if model.todos.is_empty()
        || model
            .todos
            .iter()
            .all(|t| t.status == TodoStatus::Completed)
        || area.height < 16
    {
        return Vec::new();
    }
    let s = &model.styles;
    let done = model
        .todos
        .iter()
        .filter(|t| t.status == TodoStatus::Completed)
        .count();
    let mut out = vec![Line::from(Span::styled(
        format!("  todos {done}/{}", model.todos.len()),
        s.dim,
    ))];
    // Show the work in progress and what follows, not what is done.
    let start = model
        .todos
        .iter()
        .position(|t| t.status != TodoStatus::Completed)
        .unwrap_or(0);
    for t in model.todos.iter().skip(start).take(MAX_TODO_ROWS - 1) {
        let (mark, style) = match t.status {
            TodoStatus::Completed => ("✓", s.success),
            TodoStatus::InProgress => ("▸", s.accent),
            TodoStatus::Pending => ("○", s.dim),
        };
        out.push(Line::from(vec![
            Span::styled(format!("  {mark} "), style),
            Span::styled(
                truncate(&t.content, (area.width as usize).saturating_sub(4)),
                style,
            ),
        ]));
    }
    out
}
