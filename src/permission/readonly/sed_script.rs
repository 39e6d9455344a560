//! A small reader of sed scripts, enough to tell whether one only prints:
//! sed's `w`/`W` commands and the `s///w`, `s///e` flags write files or run
//! commands, and `e` executes its argument. Anything not understood is
//! refused, so the gate asks.

/// Ok when the script neither writes files nor runs commands.
pub fn check(script: &str) -> Result<(), String> {
    let chars: Vec<char> = script.chars().collect();
    let mut i = 0;
    let unsafe_script = |what: &str| Err(format!("the sed script {what}"));
    loop {
        skip_blank(&chars, &mut i, true);
        let Some(&first) = chars.get(i) else {
            return Ok(());
        };
        if first == '#' {
            skip_to_line_end(&chars, &mut i);
            continue;
        }
        if !address(&chars, &mut i) {
            return unsafe_script("has an address that cannot be read");
        }
        skip_blank(&chars, &mut i, false);
        if chars.get(i) == Some(&',') {
            i += 1;
            skip_blank(&chars, &mut i, false);
            if matches!(chars.get(i), Some('+' | '~')) {
                i += 1;
            }
            if !address(&chars, &mut i) {
                return unsafe_script("has a range that cannot be read");
            }
        }
        skip_blank(&chars, &mut i, false);
        if chars.get(i) == Some(&'!') {
            i += 1;
            skip_blank(&chars, &mut i, false);
        }
        let Some(&command) = chars.get(i) else {
            return Ok(());
        };
        i += 1;
        if command == '{' {
            continue;
        }
        one_command(command, &chars, &mut i)?;
        skip_blank(&chars, &mut i, false);
        match chars.get(i) {
            None => return Ok(()),
            Some(';' | '\n') => i += 1,
            Some('}') => {}
            Some(_) => return unsafe_script("has text that cannot be read"),
        }
    }
}

/// One command after its address: Ok when it neither writes nor runs.
fn one_command(command: char, chars: &[char], i: &mut usize) -> Result<(), String> {
    let unsafe_script = |what: &str| Err(format!("the sed script {what}"));
    match command {
        'p' | 'P' | 'd' | 'D' | 'q' | 'Q' | '=' | 'l' | 'n' | 'N' | 'g' | 'G' | 'h' | 'H' | 'x'
        | 'z' | 'F' | '}' => {
            while chars
                .get(*i)
                .is_some_and(|c| c.is_ascii_digit() || *c == ' ')
            {
                *i += 1;
            }
        }
        ':' | 'b' | 't' | 'T' | 'a' | 'i' | 'c' => skip_to_command_end(chars, i),
        's' => {
            let Some(&delim) = chars.get(*i) else {
                return unsafe_script("has an unfinished `s` command");
            };
            *i += 1;
            if !delimited(chars, i, delim) || !delimited(chars, i, delim) {
                return unsafe_script("has an unfinished `s` command");
            }
            while let Some(&flag) = chars.get(*i) {
                match flag {
                    'g' | 'p' | 'i' | 'I' | 'm' | 'M' | '0'..='9' => *i += 1,
                    'w' | 'W' => return unsafe_script("writes a file (`s///w`)"),
                    'e' => return unsafe_script("runs a command (`s///e`)"),
                    _ => break,
                }
            }
        }
        'y' => {
            let Some(&delim) = chars.get(*i) else {
                return unsafe_script("has an unfinished `y` command");
            };
            *i += 1;
            if !delimited(chars, i, delim) || !delimited(chars, i, delim) {
                return unsafe_script("has an unfinished `y` command");
            }
        }
        'w' | 'W' => return unsafe_script("writes a file (`w`)"),
        'e' => return unsafe_script("runs a command (`e`)"),
        other => return unsafe_script(&format!("uses `{other}`, which is not understood")),
    }
    Ok(())
}

fn skip_blank(chars: &[char], i: &mut usize, newlines: bool) {
    while chars
        .get(*i)
        .is_some_and(|c| *c == ' ' || *c == '\t' || (newlines && (*c == '\n' || *c == ';')))
    {
        *i += 1;
    }
}

fn skip_to_line_end(chars: &[char], i: &mut usize) {
    while chars.get(*i).is_some_and(|c| *c != '\n') {
        *i += 1;
    }
}

fn skip_to_command_end(chars: &[char], i: &mut usize) {
    while chars.get(*i).is_some_and(|c| *c != '\n' && *c != ';') {
        *i += 1;
    }
}

/// Skip text up to and including an unescaped `delim`.
fn delimited(chars: &[char], i: &mut usize, delim: char) -> bool {
    while let Some(&c) = chars.get(*i) {
        *i += 1;
        if c == '\\' {
            *i += 1;
        } else if c == delim {
            return true;
        }
    }
    false
}

/// An optional address: a line number, `$`, `first~step`, `/re/` or `\cREc`
/// (with optional `I`/`M`). False when one starts but cannot be read.
fn address(chars: &[char], i: &mut usize) -> bool {
    match chars.get(*i) {
        Some(c) if c.is_ascii_digit() => {
            while chars
                .get(*i)
                .is_some_and(|c| c.is_ascii_digit() || *c == '~')
            {
                *i += 1;
            }
            true
        }
        Some('$') => {
            *i += 1;
            true
        }
        Some('/') => {
            *i += 1;
            let ok = delimited(chars, i, '/');
            while matches!(chars.get(*i), Some('I' | 'M')) {
                *i += 1;
            }
            ok
        }
        Some('\\') => {
            *i += 1;
            let Some(&delim) = chars.get(*i) else {
                return false;
            };
            *i += 1;
            delimited(chars, i, delim)
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn printing_scripts_pass() {
        for script in [
            "s/a/b/",
            "s/a/b/g",
            "s|/usr|/opt|g;p",
            "10q",
            "1,5p",
            "/^#/d",
            "$!N; s/\\n/ /",
            "/start/,/end/{ s/x/y/g; p }",
            "y/abc/xyz/",
            "s/a\\/b/c/2",
            "",
        ] {
            assert_eq!(check(script), Ok(()), "{script}");
        }
    }

    #[test]
    fn writing_or_running_scripts_are_refused() {
        for script in [
            "s/a/b/w out.txt",
            "s/a/b/e",
            "w out.txt",
            "1,3w out",
            "e rm -rf x",
            "/x/ e ls",
            "s/a/b/gw f",
            "1v",
            "s/unfinished",
        ] {
            assert!(check(script).is_err(), "{script}");
        }
    }
}
