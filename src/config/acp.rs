//! `[acp]`: how `cairn acp` uses what an editor offers.

use serde::Deserialize;

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AcpConfig {
    /// Show foreground commands in the editor's terminal when it offers
    /// one (still inside cairn's sandbox); `false` keeps them in cairn.
    pub editor_terminals: Option<bool>,
}

impl AcpConfig {
    pub fn editor_terminals(&self) -> bool {
        self.editor_terminals.unwrap_or(true)
    }

    /// A more specific file of the person's own over this one.
    pub fn overlay(&mut self, other: AcpConfig) {
        if other.editor_terminals.is_some() {
            self.editor_terminals = other.editor_terminals;
        }
    }

    /// A project's section: it may only turn the editor's terminals off,
    /// trusted or not (where commands run is the person's to say).
    pub fn tighten(&mut self, project: AcpConfig) {
        if project.editor_terminals == Some(false) {
            self.editor_terminals = Some(false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_may_turn_terminals_off_but_never_on() {
        let off = AcpConfig {
            editor_terminals: Some(false),
        };
        let on = AcpConfig {
            editor_terminals: Some(true),
        };
        let mut person = off.clone();
        person.tighten(on.clone());
        assert!(!person.editor_terminals());
        let mut person = AcpConfig::default();
        assert!(person.editor_terminals());
        person.tighten(off);
        assert!(!person.editor_terminals());
        person.overlay(on);
        assert!(person.editor_terminals());
    }

    /// Through the files: the person's `false` holds against a project's
    /// `true`, trusted or not; a project's `false` applies at once.
    #[test]
    fn a_project_file_cannot_turn_the_persons_choice_back_on() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("p");
        std::fs::create_dir_all(root.join(".cairn")).unwrap();
        let project = super::super::project_config_path(&root);
        let global = dir.path().join("global.toml");
        std::fs::write(&global, "[acp]\neditor_terminals = false\n").unwrap();
        std::fs::write(&project, "max_turns = 99\n[acp]\neditor_terminals = true\n").unwrap();
        let mut c = super::super::load_layers(Some(&global), None, &project).unwrap();
        assert!(!c.file.acp.editor_terminals());
        c.trust_project();
        assert!(!c.file.acp.editor_terminals());

        std::fs::write(&project, "[acp]\neditor_terminals = false\n").unwrap();
        let c = super::super::load_layers(None, None, &project).unwrap();
        assert!(!c.file.acp.editor_terminals());
    }
}
