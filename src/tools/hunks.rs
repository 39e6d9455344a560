//! An edit with some of its hunks left out, as the person chose in review:
//! only the accepted hunks reach the file, and the model is told exactly
//! which ones did not, with their text and the person's reason.

use super::RejectedHunks;
use super::edit_core::{FileText, Plan};
use crate::diff::{apply_hunks, hunk_text, hunks};

/// How the note to the model begins; the tool's pane reads it back.
pub(crate) const NOTE_START: &str = "The person reviewed the change hunk by hunk and rejected ";
const REASON: &str = "Their reason: ";

/// From an edit's output: how many hunks the person rejected, of how many,
/// and their reason if they gave one.
pub fn rejected_tally(output: &str) -> Option<(usize, usize, Option<&str>)> {
    let rest = &output[output.find(NOTE_START)? + NOTE_START.len()..];
    let (counts, _) = rest.split_once(';')?;
    let (out, all) = counts.split_once(" of ")?;
    let reason = rest
        .find(REASON)
        .map(|i| rest[i + REASON.len()..].lines().next().unwrap_or("").trim());
    Some((out.trim().parse().ok()?, all.trim().parse().ok()?, reason))
}

impl Plan {
    /// Leaves out the rejected hunks; returns the note for the model. An
    /// `Err` is the answer when nothing would be left.
    pub fn keep_accepted(&mut self, rejected: &RejectedHunks) -> Result<String, String> {
        let all = hunks(&self.old_text, &self.new_text);
        let out: Vec<usize> = rejected
            .hunks
            .iter()
            .copied()
            .filter(|i| *i < all.len())
            .collect();
        if out.is_empty() {
            return Ok(String::new());
        }
        let mut note = format!(
            "{NOTE_START}{} of {}; {} not applied:",
            out.len(),
            all.len(),
            if out.len() == 1 {
                "it was"
            } else {
                "they were"
            }
        );
        for &i in &out {
            note.push_str(&format!(
                "\n\nRejected hunk {} of {}:\n{}",
                i + 1,
                all.len(),
                hunk_text(&self.old_text, &self.new_text, &all[i]).trim_end()
            ));
        }
        match rejected.reason.as_deref().map(str::trim) {
            Some(r) if !r.is_empty() => note.push_str(&format!("\n\n{REASON}{r}")),
            _ => note.push_str("\n\nDo not apply the rejected hunks again as they were."),
        }
        if out.len() == all.len() {
            return Err(format!(
                "Nothing was changed. {}",
                note.replacen("; they were not applied", "", 1)
            ));
        }
        let accepted: Vec<bool> = (0..all.len()).map(|i| !out.contains(&i)).collect();
        let text = apply_hunks(&self.old_text, &self.new_text, &accepted);
        self.after = match self.form {
            Some((bom, crlf)) => FileText {
                bom,
                crlf,
                text: String::new(),
            }
            .encode(&text),
            None => text.clone().into_bytes(),
        };
        self.new_text = text;
        Ok(note)
    }
}

/// Applies the person's review to a plan, writes it and has it formatted
/// (`format`); the model's answer.
pub fn write_reviewed(mut plan: Plan, ctx: &super::ToolContext, verb: &str) -> super::ToolOutput {
    let note = match &ctx.rejected {
        Some(r) => match plan.keep_accepted(r) {
            Ok(note) => note,
            Err(answer) => return super::ToolOutput::error(answer),
        },
        None => String::new(),
    };
    if let Err(e) = plan.write(ctx) {
        return super::ToolOutput::error(e);
    }
    let formatted = super::format::after_write(&mut plan, ctx);
    let mut out = plan.output(verb);
    if let Some(crate::conversation::ResultContent::Text { text }) = out.content.first_mut() {
        for part in formatted
            .iter()
            .chain(Some(&note).filter(|n| !n.is_empty()))
        {
            text.push_str("\n\n");
            text.push_str(part);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::rejected_tally;

    #[test]
    fn the_tally_is_read_back_from_the_note() {
        let out = format!(
            "Edited a.txt (+1 -1 lines)\n\n{}1 of 3; it was not applied:\n\n\
             Rejected hunk 2 of 3:\n@@ -9,1 +9,1 @@\n-row 9\n+ROW 9\n\n{}no caps",
            super::NOTE_START,
            super::REASON
        );
        assert_eq!(rejected_tally(&out), Some((1, 3, Some("no caps"))));
        assert_eq!(rejected_tally("Edited a.txt (+1 -1 lines)"), None);
    }
}
