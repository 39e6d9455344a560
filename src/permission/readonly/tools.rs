//! Read-only checks of tools that have a few options that write files or
//! run programs. Options are parsed the way the tool parses them (GNU
//! tools accept any unambiguous prefix of a long option, and options after
//! operands); an option the tool would not accept asks.

use super::Reason;
use crate::permission::getopt::{self, Spec, Takes};

use Takes::{Nothing as N, Optional as O, Value as V};

/// GNU sed 4.
const SED: Spec = Spec {
    short: &[
        ('b', N),
        ('n', N),
        ('e', V),
        ('f', V),
        ('l', V),
        ('i', O),
        ('E', N),
        ('r', N),
        ('s', N),
        ('u', N),
        ('z', N),
    ],
    long: &[
        ("binary", N, Some('b')),
        ("quiet", N, Some('n')),
        ("silent", N, Some('n')),
        ("debug", N, None),
        ("expression", V, Some('e')),
        ("file", V, Some('f')),
        ("follow-symlinks", N, None),
        ("in-place", O, Some('i')),
        ("line-length", V, Some('l')),
        ("null-data", N, Some('z')),
        ("zero-terminated", N, Some('z')),
        ("posix", N, None),
        ("regexp-extended", N, Some('r')),
        ("sandbox", N, None),
        ("separate", N, Some('s')),
        ("unbuffered", N, Some('u')),
        ("help", N, None),
        ("version", N, None),
    ],
    stop_at_operand: false,
    numeric_options: false,
};

/// GNU coreutils sort.
const SORT: Spec = Spec {
    short: &[
        ('b', N),
        ('c', N),
        ('C', N),
        ('d', N),
        ('f', N),
        ('g', N),
        ('h', N),
        ('i', N),
        ('k', V),
        ('m', N),
        ('M', N),
        ('n', N),
        ('o', V),
        ('r', N),
        ('R', N),
        ('s', N),
        ('S', V),
        ('t', V),
        ('T', V),
        ('u', N),
        ('V', N),
        ('y', V),
        ('z', N),
    ],
    long: &[
        ("ignore-leading-blanks", N, Some('b')),
        ("check", O, None),
        ("compress-program", V, None),
        ("debug", N, None),
        ("dictionary-order", N, Some('d')),
        ("ignore-case", N, Some('f')),
        ("files0-from", V, None),
        ("general-numeric-sort", N, Some('g')),
        ("ignore-nonprinting", N, Some('i')),
        ("key", V, Some('k')),
        ("merge", N, Some('m')),
        ("month-sort", N, Some('M')),
        ("numeric-sort", N, Some('n')),
        ("human-numeric-sort", N, Some('h')),
        ("output", V, Some('o')),
        ("random-sort", N, Some('R')),
        ("random-source", V, None),
        ("reverse", N, Some('r')),
        ("sort", V, None),
        ("stable", N, Some('s')),
        ("buffer-size", V, Some('S')),
        ("field-separator", V, Some('t')),
        ("temporary-directory", V, Some('T')),
        ("unique", N, Some('u')),
        ("version-sort", N, Some('V')),
        ("zero-terminated", N, Some('z')),
        ("parallel", V, None),
        ("help", N, None),
        ("version", N, None),
    ],
    stop_at_operand: false,
    numeric_options: false,
};

/// GNU coreutils uniq.
const UNIQ: Spec = Spec {
    short: &[
        ('0', N),
        ('1', N),
        ('2', N),
        ('3', N),
        ('4', N),
        ('5', N),
        ('6', N),
        ('7', N),
        ('8', N),
        ('9', N),
        ('c', N),
        ('d', N),
        ('D', N),
        ('f', V),
        ('i', N),
        ('s', V),
        ('u', N),
        ('w', V),
        ('z', N),
    ],
    long: &[
        ("count", N, Some('c')),
        ("repeated", N, Some('d')),
        ("all-repeated", O, None),
        ("group", O, None),
        ("skip-fields", V, Some('f')),
        ("ignore-case", N, Some('i')),
        ("skip-chars", V, Some('s')),
        ("unique", N, Some('u')),
        ("zero-terminated", N, Some('z')),
        ("check-chars", V, Some('w')),
        ("help", N, None),
        ("version", N, None),
    ],
    stop_at_operand: false,
    numeric_options: false,
};

fn parsed<'a>(cmd: &str, args: &'a [String], spec: &Spec) -> Result<getopt::Parsed<'a>, Reason> {
    getopt::parse(args, spec).map_err(|why| format!("`{cmd}`: {why}, which cairn cannot judge"))
}

pub(in crate::permission) fn check_sed(args: &[String]) -> Result<(), Reason> {
    let p = parsed("sed", args, &SED)?;
    let mut scripts: Vec<&str> = Vec::new();
    for opt in &p.options {
        if opt.is('i', "in-place") {
            return Err("`sed -i` edits files in place".into());
        }
        if opt.is('f', "file") {
            return Err("`sed -f` runs a script that cannot be checked".into());
        }
        if opt.is('e', "expression") {
            scripts.push(opt.value.unwrap_or(""));
        }
    }
    if scripts.is_empty()
        && let Some(script) = p.operands.first()
    {
        scripts.push(script);
    }
    for script in scripts {
        super::sed_script::check(script)?;
    }
    Ok(())
}

pub(super) fn check_sort(args: &[String]) -> Result<(), Reason> {
    for opt in parsed("sort", args, &SORT)?.options {
        if opt.is('o', "output") {
            return Err(format!("`sort -o` writes a file (`{}`)", opt.written));
        }
        if opt.long == Some("compress-program") {
            return Err(format!(
                "`sort {}` runs another program (`--compress-program`)",
                opt.written
            ));
        }
    }
    Ok(())
}

/// `uniq IN OUT` writes OUT.
pub(super) fn check_uniq(args: &[String]) -> Result<(), Reason> {
    let p = parsed("uniq", args, &UNIQ)?;
    if p.operands.len() > 1 {
        Err("`uniq` with two file names writes the second".into())
    } else {
        Ok(())
    }
}

/// ripgrep parses long options exactly (no abbreviations).
pub(super) fn check_rg(args: &[String]) -> Result<(), Reason> {
    for arg in args {
        if arg == "--" {
            break;
        }
        for flag in ["--pre", "--hostname-bin"] {
            if arg == flag || arg.starts_with(&format!("{flag}=")) {
                return Err(format!("`rg {flag}` runs another program"));
            }
        }
    }
    Ok(())
}

/// Whether `arg` is a GNU long option naming `long` (any prefix of it of at
/// least `min` letters, since getopt_long takes unambiguous abbreviations).
fn names_long(arg: &str, long: &str, min: usize) -> bool {
    let Some(body) = arg.strip_prefix("--") else {
        return false;
    };
    let name = body.split('=').next().unwrap_or(body);
    name.len() >= min && long.starts_with(name)
}

/// Refuse any argument that is one of `short` (also inside a cluster of
/// short options) or a long option naming one of `long`.
pub(super) fn refuse(
    cmd: &str,
    args: &[String],
    short: &[char],
    long: &[&str],
    what: &str,
) -> Result<(), Reason> {
    for arg in args {
        if arg == "--" {
            break;
        }
        if let Some(name) = long.iter().find(|l| names_long(arg, l, 1)) {
            return Err(format!("`{cmd} --{name}` {what}"));
        }
        let cluster = arg.strip_prefix('-').filter(|c| !c.starts_with('-'));
        if let Some(c) = cluster.and_then(|c| c.chars().find(|c| short.contains(c))) {
            return Err(format!("`{cmd} -{c}` {what}"));
        }
    }
    Ok(())
}

pub(super) fn check_find(args: &[String]) -> Result<(), Reason> {
    for arg in args {
        match arg.as_str() {
            "-delete" => return Err("`find -delete` removes files".into()),
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                return Err(format!("`find {arg}` runs other commands"));
            }
            "-fprint" | "-fprint0" | "-fprintf" | "-fls" => {
                return Err(format!("`find {arg}` writes a file"));
            }
            _ => {}
        }
    }
    Ok(())
}

pub(super) fn check_hostname(args: &[String]) -> Result<(), Reason> {
    let reading = ["-f", "-s", "-i", "-I", "-d", "-A", "--fqdn", "--short"];
    if args.iter().all(|a| reading.contains(&a.as_str())) {
        Ok(())
    } else {
        Err("`hostname` with arguments can change the host name".into())
    }
}
