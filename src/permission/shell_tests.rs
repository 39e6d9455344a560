use super::*;

fn names(a: &ShellAnalysis) -> Vec<String> {
    a.commands
        .iter()
        .map(|c| c.name().unwrap_or("").to_string())
        .collect()
}

fn ok(cmd: &str) -> ShellAnalysis {
    let a = parse(cmd);
    assert_eq!(a.parse_error, None, "{cmd}");
    a
}

#[test]
fn dbg_dump() {
    for c in [
        ":(){ :|:& };:",
        "echo \"$(rm -f a)\"",
        "cat <<EOF > f\nhi $(whoami)\nEOF\n",
        "ls 2>&1 >&2 &> x >| y",
        "echo ${x:-$(rm a)}",
    ] {
        eprintln!("{c:?} => {:#?}", parse(c));
    }
}
