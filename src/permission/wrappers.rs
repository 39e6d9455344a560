//! Commands that run another command (`env`, `nice`, `timeout`, `xargs`,
//! `time`, `exec`, `command`, ...): where their own options end and the
//! command they run begins, parsed the way each program parses them.

use super::getopt::{self, Parsed, Spec, Takes};

use Takes::{Nothing as N, Optional as O, Value as V};

const ENV: Spec = Spec {
    short: &[('C', V), ('i', N), ('S', V), ('u', V), ('v', N), ('0', N)],
    long: &[
        ("ignore-environment", N, Some('i')),
        ("null", N, Some('0')),
        ("unset", V, Some('u')),
        ("chdir", V, Some('C')),
        ("debug", N, Some('v')),
        ("split-string", V, Some('S')),
        ("block-signal", O, None),
        ("default-signal", O, None),
        ("ignore-signal", O, None),
        ("list-signal-handling", N, None),
        ("help", N, None),
        ("version", N, None),
    ],
    stop_at_operand: true,
    numeric_options: false,
};

const NICE: Spec = Spec {
    short: &[('n', V)],
    long: &[
        ("adjustment", V, Some('n')),
        ("help", N, None),
        ("version", N, None),
    ],
    stop_at_operand: true,
    numeric_options: true,
};

const TIMEOUT: Spec = Spec {
    short: &[('k', V), ('s', V), ('v', N)],
    long: &[
        ("kill-after", V, Some('k')),
        ("signal", V, Some('s')),
        ("foreground", N, None),
        ("preserve-status", N, None),
        ("verbose", N, Some('v')),
        ("help", N, None),
        ("version", N, None),
    ],
    stop_at_operand: true,
    numeric_options: false,
};

const STDBUF: Spec = Spec {
    short: &[('i', V), ('o', V), ('e', V)],
    long: &[
        ("input", V, Some('i')),
        ("output", V, Some('o')),
        ("error", V, Some('e')),
        ("help", N, None),
        ("version", N, None),
    ],
    stop_at_operand: true,
    numeric_options: false,
};

const NOHUP: Spec = Spec {
    short: &[],
    long: &[("help", N, None), ("version", N, None)],
    stop_at_operand: true,
    numeric_options: false,
};

/// GNU time (the program, as `\time` or `command time`; the bash keyword
/// never reaches the gate as a word).
const TIME: Spec = Spec {
    short: &[
        ('a', N),
        ('f', V),
        ('o', V),
        ('p', N),
        ('q', N),
        ('v', N),
        ('V', N),
    ],
    long: &[
        ("append", N, Some('a')),
        ("format", V, Some('f')),
        ("output", V, Some('o')),
        ("output-file", V, Some('o')),
        ("portability", N, Some('p')),
        ("quiet", N, Some('q')),
        ("verbose", N, Some('v')),
        ("help", N, None),
        ("version", N, Some('V')),
    ],
    stop_at_operand: true,
    numeric_options: false,
};

/// GNU findutils xargs.
pub(super) const XARGS: Spec = Spec {
    short: &[
        ('0', N),
        ('a', V),
        ('E', V),
        ('e', O),
        ('i', O),
        ('I', V),
        ('l', O),
        ('L', V),
        ('n', V),
        ('o', N),
        ('p', N),
        ('r', N),
        ('s', V),
        ('t', N),
        ('x', N),
        ('P', V),
        ('d', V),
    ],
    long: &[
        ("null", N, Some('0')),
        ("arg-file", V, Some('a')),
        ("delimiter", V, Some('d')),
        ("eof", O, Some('e')),
        ("replace", O, Some('i')),
        ("max-lines", O, Some('l')),
        ("max-args", V, Some('n')),
        ("open-tty", N, Some('o')),
        ("interactive", N, Some('p')),
        ("no-run-if-empty", N, Some('r')),
        ("max-chars", V, Some('s')),
        ("verbose", N, Some('t')),
        ("show-limits", N, None),
        ("exit", N, Some('x')),
        ("max-procs", V, Some('P')),
        ("process-slot-var", V, None),
        ("version", N, None),
        ("help", N, None),
    ],
    stop_at_operand: true,
    numeric_options: false,
};

/// bash's `command` builtin.
const COMMAND: Spec = Spec {
    short: &[('p', N), ('v', N), ('V', N)],
    long: &[],
    stop_at_operand: true,
    numeric_options: false,
};

/// bash's `exec` builtin.
const EXEC: Spec = Spec {
    short: &[('c', N), ('l', N), ('a', V)],
    long: &[],
    stop_at_operand: true,
    numeric_options: false,
};

const BUILTIN: Spec = Spec {
    short: &[],
    long: &[],
    stop_at_operand: true,
    numeric_options: false,
};

/// The last component of a command name: `/usr/bin/sudo` is `sudo`.
pub fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

fn spec_of(name: &str) -> Option<&'static Spec> {
    Some(match name {
        "env" => &ENV,
        "nice" => &NICE,
        "timeout" => &TIMEOUT,
        "stdbuf" => &STDBUF,
        "nohup" => &NOHUP,
        "time" => &TIME,
        "xargs" => &XARGS,
        "command" => &COMMAND,
        "exec" => &EXEC,
        "builtin" => &BUILTIN,
        _ => return None,
    })
}

/// `command -v NAME…` / `command -V NAME…`: a lookup that runs nothing.
/// Only the plain form counts; anything else is judged as running its
/// command.
pub fn is_command_lookup(args: &[String]) -> bool {
    matches!(args.first().map(String::as_str), Some("-v" | "-V"))
        && args.len() >= 2
        && args[1..]
            .iter()
            .all(|a| !a.is_empty() && !a.starts_with('-'))
}

/// The options of wrapper `name`, parsed as it parses them; None when
/// `name` is no wrapper or would reject its arguments.
pub fn wrapper_options<'a>(name: &str, args: &'a [String]) -> Option<Parsed<'a>> {
    getopt::parse(args, spec_of(name)?).ok()
}

/// The command a wrapper (`env`, `time`, `xargs`, `exec`, ...) runs, or
/// None when `name` is no wrapper, is a `command -v` lookup, or its options
/// are not understood. An empty slice means the wrapper runs nothing of
/// the call's own (`xargs` alone runs `echo`).
pub fn wrapped_command<'a>(name: &str, args: &'a [String]) -> Option<&'a [String]> {
    if name == "command" && is_command_lookup(args) {
        return None;
    }
    let parsed = wrapper_options(name, args)?;
    let mut start = parsed.end;
    match name {
        "env" => {
            if parsed.options.iter().any(|o| o.is('S', "split-string")) {
                return None;
            }
            if args.get(start).is_some_and(|a| a == "-") {
                start += 1;
            }
            while args.get(start).is_some_and(|a| a.contains('=')) {
                start += 1;
            }
        }
        "timeout" => {
            // The duration comes before the command.
            if start >= args.len() {
                return None;
            }
            start += 1;
        }
        _ => {}
    }
    args.get(start..)
}

/// Programs that run a command given as their arguments, with options
/// too many or too varied to model one by one (setsid(1), flock(1),
/// taskset(1), ionice(1), chrt(1), strace(1), ltrace(1), unshare(1),
/// nsenter(1), systemd-run(1), bwrap(1), valgrind(1), …). For them every
/// operand may be where the command begins: the inspector looks at each
/// such tail, which can only make it see more, never less.
pub const RUNNERS: &[&str] = &[
    "setsid",
    "flock",
    "taskset",
    "ionice",
    "chrt",
    "strace",
    "ltrace",
    "unshare",
    "nsenter",
    "runuser",
    "systemd-run",
    "watch",
    "bwrap",
    "firejail",
    "fakeroot",
    "proot",
    "valgrind",
    "torsocks",
    "proxychains",
    "proxychains4",
    "catchsegv",
    "xvfb-run",
    "dbus-run-session",
    "unbuffer",
    "faketime",
    "setpriv",
    "prlimit",
    "numactl",
    "cpulimit",
    "chpst",
    "sshpass",
    "rlwrap",
    "chronic",
    "ifne",
    "lckdo",
    "entr",
    "perf",
    "ssh-agent",
    "screen",
    "dtach",
    "nsjail",
    "capsh",
    "sem",
    "parallel",
    "with-lock-ex",
    "daemonize",
    "start-stop-daemon",
    "run-one",
    "tsp",
    "nq",
    "pkexec",
    "doas",
    "sudo",
    "su",
    "sg",
    "newgrp",
    "chroot",
];

/// Every command `name` may run from its own arguments (besides the
/// precise [`wrapped_command`]): each `find -exec … ;`, the commands
/// before `parallel`'s `:::`, and for [`RUNNERS`] each tail of the
/// arguments that starts with an operand.
pub fn inner_commands<'a>(name: &str, args: &'a [String]) -> Vec<&'a [String]> {
    let mut out = Vec::new();
    if name == "find" {
        let mut rest = args;
        while let Some(at) = rest
            .iter()
            .position(|a| ["-exec", "-execdir", "-ok", "-okdir"].contains(&a.as_str()))
        {
            let run = &rest[at + 1..];
            let end = run
                .iter()
                .position(|a| a == ";" || a == "+")
                .unwrap_or(run.len());
            out.push(&run[..end]);
            rest = &run[end..];
        }
        return out;
    }
    if !RUNNERS.contains(&name) {
        return out;
    }
    let end = if matches!(name, "parallel" | "sem") {
        args.iter()
            .position(|a| a.starts_with(":::"))
            .unwrap_or(args.len())
    } else {
        args.len()
    };
    let args = &args[..end];
    for (i, arg) in args.iter().enumerate() {
        let after_dashes = i > 0 && args[i - 1] == "--";
        if (after_dashes || !arg.starts_with('-')) && !arg.is_empty() {
            out.push(&args[i..]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inner(words: &str) -> Option<Vec<String>> {
        let words: Vec<String> = words.split_whitespace().map(String::from).collect();
        wrapped_command(&words[0], &words[1..]).map(<[String]>::to_vec)
    }

    #[test]
    fn wrappers_are_parsed_as_their_programs_parse_them() {
        let cases = [
            ("xargs -l rm echo -rf", Some("rm echo -rf")),
            ("xargs -i rm echo -rf", Some("rm echo -rf")),
            ("xargs -I X rm -rf X", Some("rm -rf X")),
            ("xargs -0n1 grep foo", Some("grep foo")),
            ("xargs --arg-file f rm", Some("rm")),
            ("xargs -Ex rm", Some("rm")),
            ("xargs", Some("")),
            ("time -f echo rm -rf src", Some("rm -rf src")),
            ("time --format=x rm", Some("rm")),
            ("time -o out ls", Some("ls")),
            ("exec -a cat rm -rf src", Some("rm -rf src")),
            ("exec -cl rm", Some("rm")),
            ("exec -acat rm", Some("rm")),
            ("command rm -rf src -v", Some("rm -rf src -v")),
            ("command -p rm x", Some("rm x")),
            ("command -v rm -rf x", Some("rm -rf x")),
            ("command -v cargo", None),
            ("env -i - A=1 B=2 rm", Some("rm")),
            ("env A=1 - rm", Some("- rm")),
            ("env -S x", None),
            ("env -iS x", None),
            ("nice -10 rm", Some("rm")),
            ("nice -n 5 rm", Some("rm")),
            ("nice --adj 5 rm", Some("rm")),
            ("timeout -s KILL 5 rm", Some("rm")),
            ("timeout -vk 1 5 rm", Some("rm")),
            ("stdbuf -oL rm", Some("rm")),
            ("ls -l", None),
        ];
        for (command, want) in cases {
            let want = want.map(|w| {
                w.split_whitespace()
                    .map(String::from)
                    .collect::<Vec<String>>()
            });
            assert_eq!(inner(command), want, "{command}");
        }
    }
}
