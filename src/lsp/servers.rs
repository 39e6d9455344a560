//! Which language server looks after a file: the servers cairn knows out
//! of the box, the person's `[lsp.NAME]` changes over them, and the choice
//! by file extension, program on `PATH` and root markers.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::config::lsp::{LspConfig, LspServerConfig};

/// A server as cairn starts it.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerSpec {
    pub name: String,
    pub command: String,
    pub args: Vec<String>,
    pub filetypes: Vec<String>,
    pub root_markers: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub initialization_options: Option<serde_json::Value>,
}

/// (name, command, args, filetypes, root markers).
type Known = (
    &'static str,
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
    &'static [&'static str],
);

/// The built-in servers, in order of preference where several serve one
/// language.
const KNOWN: &[Known] = &[
    (
        "basedpyright",
        "basedpyright-langserver",
        &["--stdio"],
        &["py", "pyi"],
        PY_MARKERS,
    ),
    (
        "pyright",
        "pyright-langserver",
        &["--stdio"],
        &["py", "pyi"],
        PY_MARKERS,
    ),
    ("pylsp", "pylsp", &[], &["py"], PY_MARKERS),
    (
        "typescript",
        "typescript-language-server",
        &["--stdio"],
        &["ts", "tsx", "js", "jsx", "mjs", "cjs", "mts", "cts"],
        &["tsconfig.json", "jsconfig.json", "package.json"],
    ),
    (
        "rust-analyzer",
        "rust-analyzer",
        &[],
        &["rs"],
        &["Cargo.toml"],
    ),
    ("gopls", "gopls", &[], &["go"], &["go.mod", "go.work"]),
    (
        "clangd",
        "clangd",
        &[],
        &["c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx"],
        &["compile_commands.json", "compile_flags.txt", ".clangd"],
    ),
    (
        "bash",
        "bash-language-server",
        &["start"],
        &["sh", "bash"],
        &[],
    ),
];

const PY_MARKERS: &[&str] = &[
    "pyproject.toml",
    "pyrightconfig.json",
    "setup.py",
    "setup.cfg",
    "requirements.txt",
];

/// The protocol's language id for a file extension.
pub fn language_id(path: &Path) -> &'static str {
    match extension(path).as_str() {
        "py" | "pyi" => "python",
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "typescriptreact",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "javascriptreact",
        "rs" => "rust",
        "go" => "go",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => "cpp",
        "sh" | "bash" => "shellscript",
        _ => "plaintext",
    }
}

pub(super) fn extension(path: &Path) -> String {
    path.extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default()
}

/// Every server the configuration describes, built-in ones first (with
/// the person's changes), then the person's own; disabled ones left out.
/// Entries that cannot be a server are returned as (name, why).
pub fn specs(config: &LspConfig) -> (Vec<ServerSpec>, Vec<(String, String)>) {
    let mut out = Vec::new();
    let mut bad = Vec::new();
    if !config.enabled() {
        return (out, bad);
    }
    for (name, command, args, filetypes, markers) in KNOWN {
        let over = config.servers.get(*name);
        if over.is_some_and(|o| o.disabled) {
            continue;
        }
        let mut spec = ServerSpec {
            name: name.to_string(),
            command: command.to_string(),
            args: args.iter().map(|s| s.to_string()).collect(),
            filetypes: filetypes.iter().map(|s| s.to_string()).collect(),
            root_markers: markers.iter().map(|s| s.to_string()).collect(),
            env: BTreeMap::new(),
            initialization_options: None,
        };
        if let Some(o) = over {
            apply(&mut spec, o);
        }
        out.push(spec);
    }
    for (name, o) in &config.servers {
        if o.disabled || KNOWN.iter().any(|k| k.0 == name) {
            continue;
        }
        match (&o.command, &o.filetypes) {
            (Some(command), Some(filetypes)) if !filetypes.is_empty() => {
                let mut spec = ServerSpec {
                    name: name.clone(),
                    command: command.clone(),
                    args: Vec::new(),
                    filetypes: filetypes.clone(),
                    root_markers: Vec::new(),
                    env: BTreeMap::new(),
                    initialization_options: None,
                };
                apply(&mut spec, o);
                // The person's own server goes before a built-in one for
                // the same files.
                out.insert(0, spec);
            }
            _ => bad.push((
                name.clone(),
                "a new server needs `command` and `filetypes`".to_string(),
            )),
        }
    }
    (out, bad)
}

fn apply(spec: &mut ServerSpec, o: &LspServerConfig) {
    if let Some(c) = &o.command {
        spec.command = c.clone();
    }
    if let Some(a) = &o.args {
        spec.args = a.clone();
    }
    if let Some(f) = &o.filetypes {
        spec.filetypes = f.iter().map(|f| f.trim_start_matches('.').into()).collect();
    }
    if let Some(m) = &o.root_markers {
        spec.root_markers = m.clone();
    }
    spec.env.extend(o.env.clone());
    if let Some(v) = &o.initialization_options {
        spec.initialization_options = serde_json::to_value(v).ok();
    }
}

/// Where `program` is: itself when it names a path, else the first match
/// on `PATH`. Relative `PATH` entries (`.`, an empty one) are skipped:
/// they would find a program the repository ships, started unasked the
/// first time the model opens a file.
pub fn find_program(program: &str, path_var: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    if program.contains('/') {
        // A relative path would be checked from cairn's folder and started
        // from the server's root: two different programs. Absolute only.
        let p = PathBuf::from(program);
        return (p.is_absolute() && p.is_file()).then_some(p);
    }
    std::env::split_paths(path_var?)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(program))
        .find(|p| is_executable(p))
}

/// `path_var` without relative entries and without folders inside
/// `workspace` (by their real location): a folder the repository fills
/// (`node_modules/.bin`, `./bin`, a venv) must not supply a language
/// server's program or the interpreter its `#!` line names.
pub fn safe_path(
    path_var: Option<&std::ffi::OsStr>,
    workspace: &Path,
) -> Option<std::ffi::OsString> {
    path_var.map(|p| crate::sandbox::own_path::safe_path(p, &[workspace.to_path_buf()]))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The servers for `path`'s file type, in order of preference.
pub fn for_file<'a>(specs: &'a [ServerSpec], path: &Path) -> Vec<&'a ServerSpec> {
    specs.iter().filter(|s| serves(s, path)).collect()
}

/// `spec` looks after files of `path`'s type.
pub fn serves(spec: &ServerSpec, path: &Path) -> bool {
    let ext = extension(path);
    !ext.is_empty() && spec.filetypes.iter().any(|f| f.eq_ignore_ascii_case(&ext))
}

/// The server's root for `file`: the nearest folder at or above the
/// file's, inside the workspace, that holds one of its markers; the
/// workspace when none does.
pub fn root_for(spec: &ServerSpec, file: &Path, workspace: &Path) -> PathBuf {
    let mut dir = file.parent();
    while let Some(d) = dir {
        if !d.starts_with(workspace) {
            break;
        }
        if spec.root_markers.iter().any(|m| d.join(m).exists()) {
            return d.to_path_buf();
        }
        if d == workspace {
            break;
        }
        dir = d.parent();
    }
    workspace.to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(text: &str) -> LspConfig {
        crate::config::parse(text).unwrap().lsp
    }

    #[test]
    fn known_servers_serve_their_file_types_and_the_persons_come_first() {
        let (specs, bad) = specs(&config(
            "[lsp.pyright]\nargs = [\"--stdio\", \"-v\"]\n[lsp.pylsp]\ndisabled = true\n\
             [lsp.mine]\ncommand = \"my-py\"\nfiletypes = [\".py\"]\n[lsp.broken]\ncommand = \"x\"\n",
        ));
        let names: Vec<_> = for_file(&specs, Path::new("/w/a.PY"))
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(names, ["mine", "basedpyright", "pyright"]);
        let pyright = specs.iter().find(|s| s.name == "pyright").unwrap();
        assert_eq!(pyright.args, ["--stdio", "-v"]);
        assert_eq!(bad.len(), 1, "{bad:?}");
        assert!(for_file(&specs, Path::new("/w/Makefile")).is_empty());
        assert_eq!(
            for_file(&specs, Path::new("/w/x.tsx"))[0].name,
            "typescript"
        );
        let (none, _) = super::specs(&config("[lsp]\nenabled = false\n"));
        assert!(none.is_empty());
    }

    #[test]
    fn the_root_is_the_nearest_marked_folder_inside_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(ws.join("svc/app")).unwrap();
        std::fs::write(ws.join("svc/pyproject.toml"), "").unwrap();
        std::fs::write(dir.path().join("pyproject.toml"), "").unwrap();
        let (specs, _) = specs(&LspConfig::default());
        let py = specs.iter().find(|s| s.name == "pyright").unwrap();
        assert_eq!(root_for(py, &ws.join("svc/app/m.py"), &ws), ws.join("svc"));
        // A marker above the workspace does not take the server out of it.
        assert_eq!(root_for(py, &ws.join("top.py"), &ws), ws);
    }

    #[test]
    fn programs_are_found_on_the_given_path_only_when_executable() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("srv");
        std::fs::write(&exe, "#!/bin/sh\n").unwrap();
        let path = std::env::join_paths([dir.path()]).unwrap();
        assert_eq!(find_program("srv", Some(&path)), None);
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(find_program("srv", Some(&path)), Some(exe));
        assert_eq!(find_program("other", Some(&path)), None);
        // A relative entry (`.` is the repository cairn runs in) is not
        // used, even when it names the same folder.
        let here = std::env::current_dir().unwrap();
        let mut rel_dir = std::path::PathBuf::new();
        for _ in 1..here.components().count() {
            rel_dir.push("..");
        }
        rel_dir.push(dir.path().strip_prefix("/").unwrap());
        assert!(rel_dir.join("srv").is_file());
        let rel_path = std::env::join_paths([&rel_dir]).unwrap();
        assert_eq!(find_program("srv", Some(&rel_path)), None);
        // A relative program path would be checked and started from two
        // different folders.
        let rel = rel_dir.join("srv");
        assert!(rel.is_file());
        assert_eq!(find_program(&rel.to_string_lossy(), None), None);
    }

    #[test]
    fn a_path_inside_the_workspace_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        let bin = ws.join("node_modules/.bin");
        let usr = dir.path().join("usr-bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(&usr).unwrap();
        // Also through a link that leads into the workspace.
        let link = dir.path().join("linked");
        std::os::unix::fs::symlink(&bin, &link).unwrap();
        let path = std::env::join_paths([&bin, &usr, &link, Path::new("rel")]).unwrap();
        let safe = safe_path(Some(&path), &ws).unwrap();
        assert_eq!(std::env::split_paths(&safe).collect::<Vec<_>>(), [usr]);
    }
}
