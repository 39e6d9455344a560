//! Words and the expansions inside them: de-quoting, substitutions,
//! parameter and arithmetic expansions.

use brush_parser::word::{
    Parameter, ParameterExpr, ParameterTransformOp, WordPiece, WordPieceWithSource,
};

use super::options;
use super::walker::{Ctx, Walk, Walker, deeper};
use super::words::literal_text;

impl Walker {
    /// Arithmetic text is expanded by bash before evaluation; a
    /// substitution hidden there is not worth modelling.
    pub(super) fn arithmetic(&mut self, text: &str) -> Walk {
        if text.contains("$(") || text.contains('`') {
            self.out
                .opaque
                .push(format!("a command substitution inside arithmetic: {text}"));
        }
        if names_something(text) {
            self.out.evaluated.push(format!("$(( {} ))", text.trim()));
        }
        Ok(())
    }

    /// De-quote `raw`, walking any substitutions inside it. Returns the
    /// word's text and whether it is literal.
    pub(super) fn word(&mut self, raw: &str, ctx: Ctx) -> Result<(String, bool), String> {
        let pieces = brush_parser::word::parse(raw, &options())
            .map_err(|e| format!("cannot parse the word `{raw}`: {e}"))?;
        let literal = self.pieces(&pieces, ctx)?;
        if literal {
            let mut text = String::new();
            literal_text(&pieces, &mut text);
            Ok((text, true))
        } else {
            Ok((raw.to_string(), false))
        }
    }

    /// Walk word pieces; true when all of them are literal.
    pub(super) fn pieces(
        &mut self,
        pieces: &[WordPieceWithSource],
        ctx: Ctx,
    ) -> Result<bool, String> {
        let mut literal = true;
        for piece in pieces {
            match &piece.piece {
                WordPiece::Text(_)
                | WordPiece::SingleQuotedText(_)
                | WordPiece::AnsiCQuotedText(_)
                | WordPiece::EscapeSequence(_) => {}
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => {
                    literal &= self.pieces(inner, ctx)?;
                }
                WordPiece::TildeExpansion(_) => literal = false,
                WordPiece::ParameterExpansion(expr) => {
                    literal = false;
                    self.parameter(expr)?;
                }
                WordPiece::CommandSubstitution(text)
                | WordPiece::BackquotedCommandSubstitution(text) => {
                    literal = false;
                    self.out.has_substitution = true;
                    let inner = self.new_scope(deeper(ctx)?);
                    self.program(text, inner)?;
                }
                WordPiece::ArithmeticExpression(expr) => {
                    literal = false;
                    self.arithmetic(&expr.value)?;
                }
            }
        }
        Ok(literal)
    }

    /// `${x:-$(cmd)}` runs `cmd`; such forms are rare enough to refuse to
    /// judge rather than model.
    fn parameter(&mut self, expr: &ParameterExpr) -> Walk {
        let text = format!("{expr:?}");
        if text.contains("$(") || text.contains('`') {
            self.out
                .opaque
                .push("a command substitution inside a parameter expansion".into());
        }
        use ParameterExpr as P;
        let (parameter, indirect) = match expr {
            P::Parameter {
                parameter,
                indirect,
            }
            | P::UseDefaultValues {
                parameter,
                indirect,
                ..
            }
            | P::AssignDefaultValues {
                parameter,
                indirect,
                ..
            }
            | P::IndicateErrorIfNullOrUnset {
                parameter,
                indirect,
                ..
            }
            | P::UseAlternativeValue {
                parameter,
                indirect,
                ..
            }
            | P::ParameterLength {
                parameter,
                indirect,
            }
            | P::RemoveSmallestSuffixPattern {
                parameter,
                indirect,
                ..
            }
            | P::RemoveLargestSuffixPattern {
                parameter,
                indirect,
                ..
            }
            | P::RemoveSmallestPrefixPattern {
                parameter,
                indirect,
                ..
            }
            | P::RemoveLargestPrefixPattern {
                parameter,
                indirect,
                ..
            }
            | P::Substring {
                parameter,
                indirect,
                ..
            }
            | P::Transform {
                parameter,
                indirect,
                ..
            }
            | P::UppercaseFirstChar {
                parameter,
                indirect,
                ..
            }
            | P::UppercasePattern {
                parameter,
                indirect,
                ..
            }
            | P::LowercaseFirstChar {
                parameter,
                indirect,
                ..
            }
            | P::LowercasePattern {
                parameter,
                indirect,
                ..
            }
            | P::ReplaceSubstring {
                parameter,
                indirect,
                ..
            } => (Some(parameter), *indirect),
            P::VariableNames { .. } | P::MemberKeys { .. } => (None, false),
        };
        if indirect {
            self.out
                .evaluated
                .push(format!("an indirect expansion of `{}`", shown(parameter)));
        }
        if let Some(Parameter::NamedWithIndex { name, index }) = parameter
            && !index
                .chars()
                .all(|c| c.is_ascii_digit() || c == '-' || c == ' ')
        {
            self.out.evaluated.push(format!("${{{name}[{index}]}}"));
        }
        if let P::Substring { offset, length, .. } = expr {
            for part in std::iter::once(offset).chain(length.as_ref()) {
                self.arithmetic(&part.value)?;
            }
        }
        if let P::Transform {
            op: ParameterTransformOp::PromptExpand,
            ..
        } = expr
        {
            self.out
                .evaluated
                .push(format!("a prompt expansion of `{}`", shown(parameter)));
        }
        Ok(())
    }
}

/// Whether arithmetic text refers to a variable (whose value bash would
/// evaluate in turn), beyond numbers and `${#name}` lengths.
fn names_something(text: &str) -> bool {
    let mut rest = text.to_string();
    while let Some(at) = rest.find("${#") {
        let end = rest[at..].find('}').map_or(rest.len(), |e| at + e + 1);
        rest.replace_range(at..end, "0");
    }
    rest.chars().any(|c| c.is_ascii_alphabetic() || c == '_')
}

fn shown(parameter: Option<&Parameter>) -> String {
    parameter.map(|p| p.to_string()).unwrap_or_default()
}
