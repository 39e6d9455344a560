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
        for name in arithmetic_assigned(text) {
            // Arithmetic assigns numbers.
            self.var_plain.entry(name).or_insert(true);
        }
        if names_something(text) {
            let names = arithmetic_names(text);
            self.pending_arithmetic
                .push((format!("$(( {} ))", text.trim()), names));
        }
        Ok(())
    }

    /// Record an assignment of `name`: plain when the value is a literal
    /// number or word no arithmetic evaluation can turn into code.
    pub(super) fn note_assignment(&mut self, name: &str, value: Option<(&str, bool)>) {
        let plain = value.is_some_and(|(text, literal)| {
            literal
                && text
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_.+-".contains(c))
        });
        let entry = self.var_plain.entry(name.to_string()).or_insert(true);
        *entry &= plain;
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
        let (parameter, indirect) = parameter_of(expr);
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

/// The parameter an expansion reads, and whether it is read indirectly
/// (`${!name}`).
fn parameter_of(expr: &ParameterExpr) -> (Option<&Parameter>, bool) {
    // Every form but two names one parameter, in the same two fields.
    macro_rules! named {
        ($($form:ident),* $(,)?) => {
            match expr {
                $(ParameterExpr::$form { parameter, indirect, .. } => (Some(parameter), *indirect),)*
                ParameterExpr::VariableNames { .. } | ParameterExpr::MemberKeys { .. } => (None, false),
            }
        };
    }
    named!(
        Parameter,
        UseDefaultValues,
        AssignDefaultValues,
        IndicateErrorIfNullOrUnset,
        UseAlternativeValue,
        ParameterLength,
        RemoveSmallestSuffixPattern,
        RemoveLargestSuffixPattern,
        RemoveSmallestPrefixPattern,
        RemoveLargestPrefixPattern,
        Substring,
        Transform,
        UppercaseFirstChar,
        UppercasePattern,
        LowercaseFirstChar,
        LowercasePattern,
        ReplaceSubstring,
    )
}

/// The variable names arithmetic text refers to (`x`, `$x`, `${x}`).
fn arithmetic_names(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut word = String::new();
    let mut prev: Option<char> = None;
    for c in text.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_alphanumeric() || c == '_' {
            if word.is_empty() && c.is_ascii_digit() {
                // A number (or a base like 16#ff) starts here.
                word.push('#');
            }
            word.push(c);
        } else {
            let is_length = prev == Some('#');
            if !word.is_empty() && !word.starts_with('#') && !is_length {
                names.push(word.clone());
            }
            word.clear();
        }
        prev = if word.is_empty() { Some(c) } else { prev };
    }
    names
}

/// Names arithmetic text assigns: `i=0`, `i+=2`, `i++`, `--i`.
fn arithmetic_assigned(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_ascii_alphabetic() || chars[i] == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let name: String = chars[start..i].iter().collect();
            let after: String = chars[i..].iter().collect::<String>();
            let after = after.trim_start();
            let before: String = chars[..start].iter().collect::<String>();
            let before = before.trim_end();
            let assigns = (after.starts_with('=') && !after.starts_with("=="))
                || [
                    "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "^=", "|=", "++", "--",
                ]
                .iter()
                .any(|op| after.starts_with(op))
                || before.ends_with("++")
                || before.ends_with("--");
            if assigns {
                out.push(name);
            }
        } else {
            i += 1;
        }
    }
    out
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
