//! What a shell reading its script from standard input is fed: a
//! here-document or here-string, text echoed or printed, passed along any
//! number of pass-through stages (`cat`, `tee`, …), or decoded on the way
//! (`base64 -d`, `xxd -r`, `printf '\x..'`). The security inspector reads
//! the script it finds; decoded text it cannot decode must be confirmed.

use base64::Engine;

use crate::permission::nested::Script;
use crate::permission::programs::{SHELLS, family};
use crate::permission::wrappers::{self, basename};
use crate::shell::ShellAnalysis;

/// What reaches a command's standard input.
#[derive(Debug, Clone, PartialEq)]
pub enum Fed {
    /// Text cairn can read (possibly after decoding it).
    Text(String),
    /// Text produced by a decoder cairn cannot follow.
    Undecodable(String),
    /// A file, a program's output, nothing: not shell code cairn can judge.
    Unknown,
}

/// Stages that pass their input through unchanged (or cut, which keeps
/// any line of code intact).
const PASS: &[&str] = &[
    "cat", "tee", "head", "tail", "buffer", "pv", "dd", "stdbuf", "sort", "uniq", "mbuffer",
];

/// Stages that decode their input into something else.
const DECODERS: &[&str] = &[
    "base64", "base32", "basenc", "xxd", "uudecode", "openssl", "gzip", "gunzip", "zcat", "bzip2",
    "bunzip2", "bzcat", "xz", "unxz", "xzcat", "zstd", "unzstd", "zstdcat", "rev", "tr", "sed",
    "awk", "perl", "python", "python3", "od", "iconv", "recode", "gpg", "lzma", "brotli",
];

/// What command `index` reads on standard input, following the pipeline.
pub fn fed(analysis: &ShellAnalysis, index: usize, steps: usize) -> Fed {
    if steps > 16 {
        return Fed::Unknown;
    }
    let cmd = &analysis.commands[index];
    let own: Vec<&str> = analysis
        .redirects
        .iter()
        .filter(|r| r.command == Some(index))
        .filter_map(|r| r.input.as_deref())
        .collect();
    let input = match own.last() {
        Some(text) => Fed::Text((*text).to_string()),
        None => {
            previous_stage(analysis, index).map_or(Fed::Unknown, |p| fed(analysis, p, steps + 1))
        }
    };
    if steps == 0 {
        return input;
    }
    let name = cmd.name().map(basename).unwrap_or("");
    let args = &cmd.words[1.min(cmd.words.len())..];
    let literal = cmd.literal.iter().all(|l| *l);
    match name {
        "echo" if literal => Fed::Text(
            args.iter()
                .skip_while(|a| a.starts_with('-'))
                .cloned()
                .collect::<Vec<_>>()
                .join(" "),
        ),
        "printf" if literal => {
            let text = args
                .iter()
                .skip_while(|a| a.starts_with('-'))
                .cloned()
                .collect::<Vec<_>>()
                .join(" ");
            Fed::Text(crate::shell::decode_ansi_c(&text))
        }
        "echo" | "printf" => Fed::Undecodable(format!("`{name}` of text only known when it runs")),
        _ if PASS.contains(&name) => input,
        _ if DECODERS.contains(&name) || is_decoder_call(name, args) => decode(name, args, input),
        _ => Fed::Unknown,
    }
}

fn is_decoder_call(name: &str, args: &[String]) -> bool {
    name.starts_with("python") && args.iter().any(|a| a.contains("decode"))
}

fn decode(name: &str, args: &[String], input: Fed) -> Fed {
    let what = format!("text decoded by `{name}`");
    let Fed::Text(text) = input else {
        return Fed::Undecodable(what);
    };
    let decoding = args.iter().any(|a| {
        a == "-d"
            || a == "--decode"
            || a == "-D"
            || (a.starts_with('-') && !a.starts_with("--") && a.contains('d'))
    });
    let decoded = match name {
        "base64" if decoding => {
            let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
            base64::engine::general_purpose::STANDARD
                .decode(compact.as_bytes())
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
        }
        "xxd" if args.iter().any(|a| a.starts_with("-r")) => hex(&text),
        "rev" => Some(
            text.lines()
                .map(|l| l.chars().rev().collect::<String>())
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => None,
    };
    match decoded {
        Some(text) => Fed::Text(text),
        None => Fed::Undecodable(what),
    }
}

/// `xxd -r -p`: hex digits, anything else ignored.
fn hex(text: &str) -> Option<String> {
    let digits: Vec<u32> = text.chars().filter_map(|c| c.to_digit(16)).collect();
    let bytes: Vec<u8> = digits
        .chunks(2)
        .filter(|p| p.len() == 2)
        .map(|p| (p[0] * 16 + p[1]) as u8)
        .collect();
    String::from_utf8(bytes).ok()
}

/// The command of the stage before command `index` in its pipeline.
fn previous_stage(analysis: &ShellAnalysis, index: usize) -> Option<usize> {
    let cmd = &analysis.commands[index];
    let (pipe, stage) = cmd.pipe?;
    if stage == 0 {
        return None;
    }
    // The last command of the stage before, at the same nesting: what it
    // prints is what flows on.
    analysis
        .commands
        .iter()
        .enumerate()
        .filter(|(_, c)| c.pipe == Some((pipe, stage - 1)) && c.parent == cmd.parent)
        .map(|(i, _)| i)
        .next_back()
}

/// The commands `xargs` (with arguments `args`, command `index`) builds
/// from what it is fed: with `-I R`/`-i`, its command once per input line
/// with `R` replaced; otherwise its command with the input's words
/// appended. Input cairn cannot read, handed to a shell, must be
/// confirmed.
pub fn xargs_scripts(analysis: &ShellAnalysis, index: usize, args: &[String]) -> Vec<Script> {
    let Some(parsed) = wrappers::wrapper_options("xargs", args) else {
        return Vec::new();
    };
    let inner = &args[parsed.end.min(args.len())..];
    let replace = parsed.options.iter().find_map(|o| {
        if o.is('I', "") {
            o.value.map(str::to_string)
        } else if o.is('i', "replace") {
            Some(
                o.value
                    .filter(|v| !v.is_empty())
                    .unwrap_or("{}")
                    .to_string(),
            )
        } else {
            None
        }
    });
    let origin = || "the command `xargs` builds from its input".to_string();
    let quoted = |words: &[String]| {
        words
            .iter()
            .map(|w| format!("'{}'", w.replace('\'', r"'\''")))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let inner: Vec<String> = if inner.is_empty() {
        vec!["echo".to_string()]
    } else {
        inner.to_vec()
    };
    match fed(analysis, index, 0) {
        Fed::Text(text) => match &replace {
            Some(r) => text
                .lines()
                .filter(|l| !l.trim().is_empty())
                .take(64)
                .map(|line| {
                    let words: Vec<String> =
                        inner.iter().map(|w| w.replace(r.as_str(), line)).collect();
                    Script {
                        text: quoted(&words),
                        literal: true,
                        origin: origin(),
                    }
                })
                .collect(),
            None => {
                let mut words = inner.clone();
                words.extend(text.split_whitespace().map(str::to_string));
                vec![Script {
                    text: quoted(&words),
                    literal: true,
                    origin: origin(),
                }]
            }
        },
        Fed::Undecodable(_) | Fed::Unknown => {
            let shell = inner
                .first()
                .is_some_and(|n| SHELLS.contains(&family(basename(n))));
            let runs_string = inner
                .iter()
                .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('c'));
            if shell && (runs_string || replace.is_some()) {
                vec![Script {
                    text: String::new(),
                    literal: false,
                    origin: "`xargs`, handing input to a shell,".to_string(),
                }]
            } else {
                Vec::new()
            }
        }
    }
}
