//! The memory a server holds: the resident set of its process and every
//! process under it (a sandboxed server runs below bubblewrap, `npx` below
//! node), read from `/proc`.

use std::collections::HashMap;

/// Resident KiB of `pid` and its descendants; `None` without `/proc`.
pub fn tree_rss_kib(pid: u32) -> Option<u64> {
    let entries = std::fs::read_dir("/proc").ok()?;
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for e in entries.flatten() {
        let Some(p) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if let Some(ppid) = parent_of(p) {
            children.entry(ppid).or_default().push(p);
        }
    }
    let mut total = 0;
    let mut stack = vec![pid];
    let mut seen = 0;
    while let Some(p) = stack.pop() {
        seen += 1;
        if seen > 10_000 {
            break;
        }
        total += rss_kib(p).unwrap_or(0);
        if let Some(c) = children.get(&p) {
            stack.extend(c);
        }
    }
    Some(total)
}

fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields follow the last `)`.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split(' ').nth(1)?.parse().ok()
}

fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_process_tree_holds_at_least_its_child() {
        let mut child = std::process::Command::new("sh")
            .arg("-c")
            .arg("sleep 1 & wait")
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
        let own = super::rss_kib(child.id()).unwrap();
        let tree = super::tree_rss_kib(child.id()).unwrap();
        assert!(tree > own, "{tree} ≤ {own}");
        let _ = child.kill();
        let _ = child.wait();
    }
}
