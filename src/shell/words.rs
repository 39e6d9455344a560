//! Word-level helpers for the shell analysis: brace expansion and
//! de-quoting.

use brush_parser::word::{
    BraceExpressionMember, BraceExpressionOrText, TildeExpr, WordPiece, WordPieceWithSource,
};

use super::options;

/// Words one brace expansion may produce before the command is treated as
/// unreadable.
const MAX_BRACE_WORDS: usize = 256;

/// Brace expansion happens before anything else in bash: `{/,x}` is two
/// words, `/` and `x`. None when `raw` has no brace expression.
pub(super) fn brace_alternatives(raw: &str) -> Result<Option<Vec<String>>, String> {
    if !raw.contains('{') {
        return Ok(None);
    }
    let Ok(Some(pieces)) = brush_parser::word::parse_brace_expansions(raw, &options()) else {
        return Ok(None);
    };
    if !pieces
        .iter()
        .any(|p| matches!(p, BraceExpressionOrText::Expr(_)))
    {
        return Ok(None);
    }
    expand_braces(&pieces).map(Some)
}

fn expand_braces(pieces: &[BraceExpressionOrText]) -> Result<Vec<String>, String> {
    let too_many = || format!("a brace expansion of more than {MAX_BRACE_WORDS} words");
    let mut out = vec![String::new()];
    for piece in pieces {
        let alternatives = match piece {
            BraceExpressionOrText::Text(text) => vec![text.clone()],
            BraceExpressionOrText::Expr(members) => {
                let mut alternatives = Vec::new();
                for member in members {
                    match member {
                        BraceExpressionMember::Child(children) => {
                            alternatives.extend(expand_braces(children)?)
                        }
                        BraceExpressionMember::NumberSequence {
                            start,
                            end,
                            increment,
                        } => {
                            let step = increment.unsigned_abs().max(1) as usize;
                            let count = start.abs_diff(*end) as usize / step + 1;
                            if count > MAX_BRACE_WORDS {
                                return Err(too_many());
                            }
                            let values: Vec<i64> = if start <= end {
                                (*start..=*end).step_by(step).collect()
                            } else {
                                (*end..=*start).rev().step_by(step).collect()
                            };
                            alternatives.extend(values.iter().map(i64::to_string));
                        }
                        BraceExpressionMember::CharSequence {
                            start,
                            end,
                            increment,
                        } => {
                            let step = increment.unsigned_abs().max(1) as usize;
                            let (lo, hi) = if start <= end {
                                (*start, *end)
                            } else {
                                (*end, *start)
                            };
                            let mut values: Vec<String> =
                                (lo..=hi).step_by(step).map(String::from).collect();
                            if start > end {
                                values.reverse();
                            }
                            alternatives.extend(values);
                        }
                    }
                }
                alternatives
            }
        };
        if out.len() * alternatives.len() > MAX_BRACE_WORDS {
            return Err(too_many());
        }
        out = out
            .iter()
            .flat_map(|prefix| alternatives.iter().map(move |a| format!("{prefix}{a}")))
            .collect();
    }
    Ok(out)
}

pub(super) fn literal_text(pieces: &[WordPieceWithSource], out: &mut String) {
    for piece in pieces {
        match &piece.piece {
            WordPiece::Text(t) | WordPiece::SingleQuotedText(t) | WordPiece::AnsiCQuotedText(t) => {
                out.push_str(t)
            }
            WordPiece::EscapeSequence(e) => out.push_str(e.strip_prefix('\\').unwrap_or(e)),
            WordPiece::DoubleQuotedSequence(inner)
            | WordPiece::GettextDoubleQuotedSequence(inner) => literal_text(inner, out),
            WordPiece::TildeExpansion(TildeExpr::Home) => out.push('~'),
            _ => {}
        }
    }
}
