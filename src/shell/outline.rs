//! The permission dialog's outline of a parsed command.

use super::ShellAnalysis;

impl ShellAnalysis {
    /// One line per simple command (indented by substitution depth) and per
    /// redirection that writes a file: what the permission dialog shows.
    pub fn outline(&self) -> Vec<String> {
        if let Some(error) = &self.parse_error {
            return vec![error.clone()];
        }
        let mut lines = Vec::new();
        for (i, cmd) in self.commands.iter().enumerate() {
            let mut depth = 0;
            let mut parent = cmd.parent;
            while let Some(p) = parent.filter(|_| depth < self.commands.len()) {
                depth += 1;
                parent = self.commands.get(p).and_then(|c| c.parent);
            }
            let mut parts = cmd.assignments.clone();
            parts.extend(cmd.words.iter().cloned());
            let mut line = format!("{}{}", "  ".repeat(depth), parts.join(" "));
            for r in self.redirects.iter().filter(|r| r.command == Some(i)) {
                let fd = r.fd.map(|fd| fd.to_string()).unwrap_or_default();
                line.push_str(&format!(" {fd}{}{}", r.operator, r.target));
            }
            lines.push(line);
        }
        for r in self.file_writes() {
            lines.push(format!("writes {} ({})", r.target, r.operator));
        }
        lines
    }
}
