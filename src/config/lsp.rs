//! `[lsp]`: the language servers that check edits. `enabled = false`
//! turns the feature off; each `[lsp.NAME]` table changes a known server
//! (`pyright`, `rust-analyzer`, …) or adds one.

use std::collections::BTreeMap;

use super::set;

use serde::Deserialize;

/// The whole `[lsp]` section.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
pub struct LspConfig {
    /// `false` turns every language server off.
    pub enabled: Option<bool>,
    /// `[lsp.NAME]` tables, by name.
    #[serde(flatten)]
    pub servers: BTreeMap<String, LspServerConfig>,
}

impl LspConfig {
    pub fn enabled(&self) -> bool {
        self.enabled.unwrap_or(true)
    }

    /// Lays a more specific file's section over this one, field by field.
    pub fn overlay(&mut self, other: LspConfig) {
        set(&mut self.enabled, other.enabled);
        for (name, s) in other.servers {
            let entry = self.servers.entry(name).or_default();
            set(&mut entry.command, s.command);
            set(&mut entry.args, s.args);
            set(&mut entry.filetypes, s.filetypes);
            set(&mut entry.root_markers, s.root_markers);
            set(&mut entry.initialization_options, s.initialization_options);
            entry.env.extend(s.env);
            entry.disabled |= s.disabled;
        }
    }
}

/// One `[lsp.NAME]` table. For a known server every field is optional and
/// replaces the built-in value; a new server needs `command` and
/// `filetypes`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LspServerConfig {
    pub command: Option<String>,
    pub args: Option<Vec<String>>,
    /// File extensions without the dot: `["py", "pyi"]`.
    pub filetypes: Option<Vec<String>>,
    /// Files whose folder is the server's root: `["pyproject.toml"]`.
    pub root_markers: Option<Vec<String>>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Sent as `initializationOptions` when the server starts.
    pub initialization_options: Option<toml::Value>,
    #[serde(default)]
    pub disabled: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_section_reads_the_switch_and_each_server() {
        let c: crate::config::ConfigFile = crate::config::parse(
            "[lsp]\nenabled = false\n[lsp.pyright]\nargs = [\"--stdio\"]\n\
             [lsp.mine]\ncommand = \"my-ls\"\nfiletypes = [\"foo\"]\nenv = { A = \"1\" }\n",
        )
        .unwrap();
        assert!(!c.lsp.enabled());
        assert_eq!(
            c.lsp.servers["pyright"].args.as_deref(),
            Some(&["--stdio".to_string()][..])
        );
        assert_eq!(c.lsp.servers["mine"].command.as_deref(), Some("my-ls"));
        assert_eq!(c.lsp.servers["mine"].env["A"], "1");
        let err = crate::config::parse("[lsp.x]\ncomand = \"y\"\n").unwrap_err();
        assert!(err.contains("comand"), "{err}");
    }

    #[test]
    fn overlay_replaces_fields_and_keeps_the_rest() {
        let mut base = LspConfig::default();
        base.servers.insert(
            "a".into(),
            LspServerConfig {
                command: Some("x".into()),
                args: Some(vec!["1".into()]),
                ..Default::default()
            },
        );
        let mut over = LspConfig {
            enabled: Some(false),
            ..Default::default()
        };
        over.servers.insert(
            "a".into(),
            LspServerConfig {
                args: Some(vec!["2".into()]),
                ..Default::default()
            },
        );
        base.overlay(over);
        assert_eq!(base.enabled, Some(false));
        assert_eq!(base.servers["a"].command.as_deref(), Some("x"));
        assert_eq!(base.servers["a"].args, Some(vec!["2".to_string()]));
    }
}
