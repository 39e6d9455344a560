//! The last bound on what one tool result may carry, checked on the text
//! the model will read (after formatting, redaction and escape removal),
//! whatever the tool: a result over its share is cut in the middle with a
//! note saying how much went and how to see it, so no call, however wide
//! its output, can fill the window or end the turn.

use crate::conversation::ResultContent;
use crate::tools::ToolOutput;

/// The most one result carries, about 30,000 tokens.
pub(crate) const MAX_RESULT_CHARS: usize = 120_000;
/// The least a result is cut to, however many calls share the budget.
const MIN_RESULT_CHARS: usize = 2_000;

/// Each result's share when `calls` results answer one request to a model
/// with `window` tokens: together they take at most half the window
/// (counting four characters a token).
pub(crate) fn share(window: u64, calls: usize) -> usize {
    let half_window_chars = usize::try_from(window.saturating_mul(2)).unwrap_or(usize::MAX);
    (half_window_chars / calls.max(1)).clamp(MIN_RESULT_CHARS, MAX_RESULT_CHARS)
}

/// Cuts the text of `output` to `max` characters in all, keeping each
/// over-long part's beginning and end.
pub(crate) fn bound(output: &mut ToolOutput, max: usize) {
    let mut left = max;
    for content in &mut output.content {
        let ResultContent::Text { text } = content else {
            continue;
        };
        let len = text.chars().count();
        if len <= left {
            left -= len;
            continue;
        }
        *text = format!(
            "{}\n[One tool result carries at most {max} characters; the middle of this one \
             was cut. Ask for less at a time to see it: a range (offset and limit), a \
             narrower path or pattern, or `head`/`tail`/`grep` on a command's output.]",
            crate::text::truncate_middle(text, left)
        );
        left = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_share_is_half_the_window_split_between_the_calls() {
        assert_eq!(share(200_000, 1), MAX_RESULT_CHARS);
        assert_eq!(share(200_000, 10), 40_000);
        assert_eq!(share(8_192, 1), 16_384);
        assert_eq!(share(8_192, 50), MIN_RESULT_CHARS);
        assert_eq!(share(u64::MAX, 1), MAX_RESULT_CHARS);
    }

    #[test]
    fn a_wide_result_keeps_its_ends_and_says_what_went() {
        let line = format!("{}\n", "w".repeat(999));
        let mut output = ToolOutput::text(format!("FIRST\n{}LAST", line.repeat(4_000)));
        bound(&mut output, 10_000);
        let text = output.text_content();
        assert!(text.starts_with("FIRST\n"));
        assert!(text.contains("LAST\n[One tool result carries at most 10000 characters"));
        assert!(text.contains("characters cut from the middle"), "{text}");
        assert!(text.chars().count() < 10_400);
    }

    #[test]
    fn parts_share_the_bound_and_small_results_are_untouched() {
        let mut small = ToolOutput::text("fine");
        bound(&mut small, 10);
        assert_eq!(small.text_content(), "fine");
        let mut output = ToolOutput::text("a".repeat(6_000));
        output.content.push(ResultContent::text("b".repeat(6_000)));
        bound(&mut output, 8_000);
        let ResultContent::Text { text: first } = &output.content[0] else {
            panic!("text");
        };
        assert_eq!(first.len(), 6_000);
        let ResultContent::Text { text: second } = &output.content[1] else {
            panic!("text");
        };
        assert!(second.starts_with(&"b".repeat(1_000)) && second.contains("was cut"));
    }
}
