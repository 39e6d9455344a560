//! What a `bash` pane says about its command besides the header: the
//! model's description (dim, never instead of the command), and when
//! expanded the whole command, where it ran, its sandbox, exit code and time.

use ratatui::text::{Line, Span};

use super::{ToolCell, clean, dim_line, format_elapsed};
use crate::tools::ToolDisplay;
use crate::tui::styles::Styles;
use crate::tui::wrap::wrap_prefixed;

pub(super) fn details(
    cell: &ToolCell,
    width: u16,
    expanded: bool,
    styles: &Styles,
    out: &mut Vec<Line<'static>>,
) {
    if let Some(d) = &cell.description {
        out.push(dim_line(
            &format!("  {}", crate::text::one_line(d)),
            width,
            styles,
        ));
    }
    if expanded && let Some(cmd) = &cell.command {
        let whole = cmd.lines().map(clean).collect::<Vec<_>>().join("\n");
        out.extend(wrap_prefixed(
            &whole,
            width,
            Span::styled("  $ ", styles.dim),
            Span::raw("    "),
            styles.user,
        ));
    }
    let Some(ToolDisplay::Command {
        sandbox,
        stopped,
        cwd,
        exit_code,
        ..
    }) = &cell.display
    else {
        return;
    };
    if let Some(dir) = cwd {
        out.push(dim_line(&format!("  in {dir}"), width, styles));
    }
    out.push(dim_line(&format!("  {sandbox}"), width, styles));
    if let Some(stop) = stopped {
        out.push(Line::from(Span::styled(
            crate::text::fit(&format!("  {}", stop.summary()), width as usize),
            styles.warning,
        )));
    }
    if expanded && let Some(code) = exit_code {
        let mut text = format!("  exit code {code}");
        if let Some(d) = cell.elapsed {
            text.push_str(&format!(" · ran {}", format_elapsed(d)));
        }
        let style = if *code == 0 { styles.dim } else { styles.error };
        out.push(Line::from(Span::styled(
            crate::text::fit(&text, width as usize),
            style,
        )));
    }
}
