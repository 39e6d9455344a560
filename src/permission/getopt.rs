//! Option parsing the way the commands themselves do it, so the gate sees
//! the same options, values and operands the program will: GNU
//! `getopt_long` (clusters, attached values, optional values, unambiguous
//! abbreviations of long options) and bash's builtin option reader.
//!
//! Anything the program would reject (an unknown or ambiguous option, a
//! missing value) is an error here; callers treat that as "cannot tell".

/// What an option takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Takes {
    Nothing,
    /// A value, attached (`-n5`, `--max-args=5`) or the next argument.
    Value,
    /// A value only when attached (`-l5`, `--max-lines=5`).
    Optional,
}

/// The options a command accepts.
pub struct Spec {
    /// Short options and what each takes.
    pub short: &'static [(char, Takes)],
    /// Long options (without `--`), what each takes, and the short option
    /// it is another name for.
    pub long: &'static [(&'static str, Takes, Option<char>)],
    /// Options end at the first operand (GNU's `+`, POSIX, bash builtins);
    /// otherwise GNU permutes and options may follow operands.
    pub stop_at_operand: bool,
    /// `nice`: `-5`, `--5`, `-+5`, `-10` are adjustments, not clusters.
    pub numeric_options: bool,
}

/// One option as the program sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opt<'a> {
    /// The short letter (also for a long option that stands for one).
    pub short: Option<char>,
    /// The full long name, when given as a long option or known as one.
    pub long: Option<&'static str>,
    /// The text as written (`--o=x`, `-nOx`), for messages.
    pub written: &'a str,
    pub value: Option<&'a str>,
}

impl Opt<'_> {
    /// Whether this is the short option `short` or the long one `long`.
    pub fn is(&self, short: char, long: &str) -> bool {
        self.short == Some(short) || self.long == Some(long)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed<'a> {
    pub options: Vec<Opt<'a>>,
    /// Operands, in order (with `stop_at_operand`, the first of them and
    /// everything after it).
    pub operands: Vec<&'a str>,
    /// Index (in the arguments) of the first operand when options stop at
    /// the first operand; the argument count when there is none.
    pub end: usize,
}

/// Parse `args` (without the command name) as the program would.
pub fn parse<'a>(args: &'a [String], spec: &Spec) -> Result<Parsed<'a>, String> {
    let mut out = Parsed::default();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let arg = arg.as_str();
        i += 1;
        if arg == "--" {
            out.end = i;
            out.operands.extend(args[i..].iter().map(String::as_str));
            return Ok(out);
        }
        if spec.numeric_options && is_numeric_option(arg) {
            out.options.push(Opt {
                short: None,
                long: None,
                written: arg,
                value: Some(arg.trim_start_matches('-')),
            });
            continue;
        }
        if let Some(body) = arg.strip_prefix("--") {
            let opt = long_option(body, arg, spec, args, &mut i)?;
            out.options.push(opt);
            continue;
        }
        if let Some(cluster) = arg.strip_prefix('-').filter(|c| !c.is_empty()) {
            short_cluster(cluster, arg, spec, args, &mut i, &mut out.options)?;
            continue;
        }
        if spec.stop_at_operand {
            out.end = i - 1;
            out.operands
                .extend(args[i - 1..].iter().map(String::as_str));
            return Ok(out);
        }
        out.operands.push(arg);
    }
    out.end = args.len();
    Ok(out)
}

fn is_numeric_option(arg: &str) -> bool {
    let Some(rest) = arg.strip_prefix('-') else {
        return false;
    };
    let rest = rest
        .strip_prefix('-')
        .or_else(|| rest.strip_prefix('+'))
        .unwrap_or(rest);
    rest.starts_with(|c: char| c.is_ascii_digit())
}

fn long_option<'a>(
    body: &'a str,
    written: &'a str,
    spec: &Spec,
    args: &'a [String],
    i: &mut usize,
) -> Result<Opt<'a>, String> {
    let (name, attached) = match body.split_once('=') {
        Some((name, value)) => (name, Some(value)),
        None => (body, None),
    };
    let exact = spec.long.iter().find(|(long, _, _)| *long == name);
    let found = match exact {
        Some(found) => found,
        None => {
            let candidates: Vec<_> = spec
                .long
                .iter()
                .filter(|(long, _, _)| !name.is_empty() && long.starts_with(name))
                .collect();
            // glibc accepts a prefix of several names that all mean the
            // same option (`--output` and `--output-file`).
            let same = candidates
                .windows(2)
                .all(|w| (w[0].1, w[0].2) == (w[1].1, w[1].2) && w[0].2.is_some());
            match candidates.as_slice() {
                [] => return Err(format!("unknown option `{written}`")),
                [first, ..] if candidates.len() == 1 || same => *first,
                _ => return Err(format!("ambiguous option `{written}`")),
            }
        }
    };
    let (long, takes, short) = *found;
    let value = match takes {
        Takes::Nothing if attached.is_some() => {
            return Err(format!("`--{long}` takes no value"));
        }
        Takes::Nothing => None,
        Takes::Optional => attached,
        Takes::Value => match attached {
            Some(v) => Some(v),
            None => {
                let next = args.get(*i).map(String::as_str);
                *i += 1;
                Some(next.ok_or_else(|| format!("`--{long}` needs a value"))?)
            }
        },
    };
    Ok(Opt {
        short,
        long: Some(long),
        written,
        value,
    })
}

fn short_cluster<'a>(
    cluster: &'a str,
    written: &'a str,
    spec: &Spec,
    args: &'a [String],
    i: &mut usize,
    out: &mut Vec<Opt<'a>>,
) -> Result<(), String> {
    for (at, c) in cluster.char_indices() {
        let Some((_, takes)) = spec.short.iter().find(|(s, _)| *s == c) else {
            return Err(format!("unknown option `-{c}` in `{written}`"));
        };
        let long = spec
            .long
            .iter()
            .find(|(_, _, s)| *s == Some(c))
            .map(|(l, _, _)| *l);
        let rest = &cluster[at + c.len_utf8()..];
        let value = match takes {
            Takes::Nothing => None,
            Takes::Optional => Some(rest).filter(|r| !r.is_empty()),
            Takes::Value if !rest.is_empty() => Some(rest),
            Takes::Value => {
                let next = args.get(*i).map(String::as_str);
                *i += 1;
                Some(next.ok_or_else(|| format!("`-{c}` needs a value"))?)
            }
        };
        out.push(Opt {
            short: Some(c),
            long,
            written,
            value,
        });
        if *takes != Takes::Nothing {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const XARGS_LIKE: Spec = Spec {
        short: &[
            ('0', Takes::Nothing),
            ('l', Takes::Optional),
            ('n', Takes::Value),
        ],
        long: &[
            ("max-lines", Takes::Optional, Some('l')),
            ("max-args", Takes::Value, Some('n')),
            ("max-procs", Takes::Value, None),
            ("null", Takes::Nothing, Some('0')),
        ],
        stop_at_operand: true,
        numeric_options: false,
    };

    fn args(text: &str) -> Vec<String> {
        text.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn clusters_values_and_the_first_operand() {
        let a = args("-0n1 -l rm echo -rf");
        let p = parse(&a, &XARGS_LIKE).unwrap_or_default();
        assert_eq!(p.options.len(), 3);
        assert_eq!(p.options[1].value, Some("1"));
        assert_eq!(
            p.options[2].value, None,
            "`-l` takes only an attached value"
        );
        assert_eq!(p.end, 2);
        assert_eq!(p.operands, ["rm", "echo", "-rf"]);
    }

    #[test]
    fn long_options_may_be_abbreviated_when_unambiguous() {
        let a = args("--max-a 3 --nu x");
        let p = parse(&a, &XARGS_LIKE).unwrap_or_default();
        assert_eq!(p.options[0].long, Some("max-args"));
        assert_eq!(p.options[0].value, Some("3"));
        assert!(p.options[1].is('0', "null"));
        assert!(parse(&args("--max x"), &XARGS_LIKE).is_err(), "ambiguous");
        assert!(parse(&args("--nope"), &XARGS_LIKE).is_err());
        assert!(parse(&args("--null=1"), &XARGS_LIKE).is_err());
        assert!(parse(&args("-n"), &XARGS_LIKE).is_err());
    }

    #[test]
    fn permuting_commands_take_options_after_operands() {
        let spec = Spec {
            stop_at_operand: false,
            ..XARGS_LIKE
        };
        let a = args("f -n 2 g -- -0");
        let p = parse(&a, &spec).unwrap_or_default();
        assert_eq!(p.operands, ["f", "g", "-0"]);
        assert_eq!(p.options.len(), 1);
    }
}
