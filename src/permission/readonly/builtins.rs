//! bash builtins that read a variable *name*: `printf -v`, `read`,
//! `test -v` / `[ -v ]` and `[[ … ]]`. bash evaluates an array subscript
//! in such a name (`a[$(cmd)]`) as arithmetic, which runs any command
//! substitution in it; `[[ x -eq y ]]` evaluates both sides the same way,
//! and a variable's value is evaluated in turn. These only read when the
//! names are plain and the compared values are plain numbers.

use super::Reason;
use crate::permission::getopt::{self, Spec, Takes};

/// A shell variable name with no subscript.
pub(super) fn is_identifier(word: &str) -> bool {
    let mut chars = word.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Text bash could evaluate as code when it is used as a name or a number.
fn may_hide_code(word: &str) -> bool {
    word.contains('[') && (word.contains('$') || word.contains('`'))
}

/// `printf`: any option is `-v NAME` (or an error), which assigns.
pub(super) fn check_printf(args: &[String], literal: &[bool]) -> Result<(), Reason> {
    match (args.first(), literal.first()) {
        (Some(_), Some(false)) => {
            Err("`printf` has a format only known when it runs, which could be `-v`".into())
        }
        (Some(first), _) if first.starts_with('-') && first != "-" && first != "--" => {
            Err("`printf -v` assigns a variable, and bash evaluates code in its subscript".into())
        }
        _ => Ok(()),
    }
}

const READ: Spec = Spec {
    short: &[
        ('a', Takes::Value),
        ('d', Takes::Value),
        ('e', Takes::Nothing),
        ('E', Takes::Nothing),
        ('i', Takes::Value),
        ('n', Takes::Value),
        ('N', Takes::Value),
        ('p', Takes::Value),
        ('r', Takes::Nothing),
        ('s', Takes::Nothing),
        ('t', Takes::Value),
        ('u', Takes::Value),
    ],
    long: &[],
    stop_at_operand: true,
    numeric_options: false,
};

/// `read`: every name it assigns must be a plain identifier.
pub(super) fn check_read(args: &[String], literal: &[bool]) -> Result<(), Reason> {
    let unsafe_read = || {
        Err(
            "`read` assigns names bash may evaluate as code (`a[$(…)]`); only plain names \
             read"
                .to_string(),
        )
    };
    if literal.iter().any(|l| !l) {
        return unsafe_read();
    }
    let Ok(parsed) = getopt::parse(args, &READ) else {
        return unsafe_read();
    };
    let number = |v: Option<&str>| {
        v.is_some_and(|v| {
            !v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.') && v != "."
        })
    };
    for opt in &parsed.options {
        let fine = match opt.short {
            Some('a') => opt.value.is_some_and(is_identifier),
            Some('n' | 'N' | 't' | 'u') => number(opt.value),
            _ => true,
        };
        if !fine {
            return unsafe_read();
        }
    }
    if parsed.operands.iter().all(|name| is_identifier(name)) {
        Ok(())
    } else {
        unsafe_read()
    }
}

/// `test` / `[`: `-v NAME` and `-R NAME` evaluate NAME's subscript; a word
/// only known when it runs may turn out to be such an operator or name.
pub(super) fn check_test(args: &[String], literal: &[bool]) -> Result<(), Reason> {
    for (i, (word, lit)) in args.iter().zip(literal).enumerate() {
        if *lit && may_hide_code(word) {
            return Err(format!(
                "`test` with `{word}`: bash may evaluate code inside its subscript"
            ));
        }
        let Some(next) = args.get(i + 1) else {
            continue;
        };
        let next_literal = literal.get(i + 1).copied().unwrap_or(false);
        let names_variable = *lit && (word == "-v" || word == "-R");
        let may_be_operator = names_variable || !*lit;
        let may_be_name =
            !next_literal || next.contains('[') || (names_variable && !is_identifier(next));
        if may_be_operator && may_be_name {
            return Err(format!(
                "`test {word} {next}` may name a variable whose subscript bash evaluates as code"
            ));
        }
    }
    Ok(())
}

const ARITHMETIC_TESTS: &[&str] = &["-eq", "-ne", "-lt", "-le", "-gt", "-ge"];

/// A value `[[ … -eq … ]]` may compare without evaluating code: a literal
/// number, or a parameter that is always a number (`$#`, `$?`, `${#x}`).
fn plain_number(word: &str, literal: bool) -> bool {
    let text = word.trim_matches('"');
    if literal {
        let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
        return !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit());
    }
    if ["$#", "$?", "$$", "$!", "${#}", "${?}"].contains(&text) {
        return true;
    }
    text.strip_prefix("${#")
        .and_then(|rest| rest.strip_suffix('}'))
        .is_some_and(|inner| {
            let name = inner
                .strip_suffix("[@]")
                .or_else(|| inner.strip_suffix("[*]"))
                .unwrap_or(inner);
            is_identifier(name) || name.chars().all(|c| c.is_ascii_digit())
        })
}

/// `[[ … ]]`, flattened to `[[`, its operators and operands, `]]`.
pub(super) fn check_extended_test(words: &[String], literal: &[bool]) -> Result<(), Reason> {
    for (i, (word, lit)) in words.iter().zip(literal).enumerate() {
        if *lit && may_hide_code(word) {
            return Err(format!(
                "`[[ … ]]` with `{word}`: bash may evaluate code inside its subscript"
            ));
        }
        if !*lit {
            continue;
        }
        if ARITHMETIC_TESTS.contains(&word.as_str()) {
            let around = [i.checked_sub(1), Some(i + 1)];
            for at in around.into_iter().flatten() {
                let (Some(side), Some(side_literal)) = (words.get(at), literal.get(at)) else {
                    continue;
                };
                if !plain_number(side, *side_literal) {
                    return Err(format!(
                        "`[[ … {word} … ]]` evaluates `{side}` as arithmetic, which can run \
                         code hidden in a variable"
                    ));
                }
            }
        }
        if word == "-v" || word == "-R" {
            let next = words.get(i + 1);
            let next_literal = literal.get(i + 1).copied().unwrap_or(false);
            if !(next_literal && next.is_some_and(|n| is_identifier(n))) {
                return Err(format!(
                    "`[[ {word} … ]]` names a variable whose subscript bash evaluates as code"
                ));
            }
        }
    }
    Ok(())
}
