//! `cairn permissions list|remove`: the stored allow/deny rules.

use anyhow::Result;

/// What to do with the stored rules.
pub enum Action {
    List,
    Remove { rule: String, global: bool },
}

/// Whether the rules file at `path` holds `rule` (allowed or denied).
fn holds(path: &std::path::Path, rule: &str) -> bool {
    crate::permission::store::list_rules(path)
        .is_ok_and(|r| (r.allow.iter().chain(&r.deny)).any(|x| x.trim() == rule.trim()))
}

pub fn run(action: Action) -> Result<()> {
    crate::term_safe::quiet_broken_pipe();
    use crate::permission::store::{list_rules, remove_rule};
    let cwd = std::env::current_dir()?;
    let root = crate::agent::instructions::project_root(&cwd);
    let project = crate::config::project_config_path(&root);
    let global = crate::config::global_dir().map(|d| d.join("config.toml"));
    let own = crate::config::own_rules::path_for(&root);
    match action {
        Action::List => {
            let mut any = false;
            for path in (global.iter().chain(&own)).chain(std::iter::once(&project)) {
                let rules = list_rules(path)?;
                if rules.allow.is_empty() && rules.deny.is_empty() {
                    continue;
                }
                any = true;
                println!("{}", path.display());
                for r in &rules.allow {
                    println!("  allow  {}", crate::term_safe::escape(r));
                }
                for r in &rules.deny {
                    println!("  deny   {}", crate::term_safe::escape(r));
                }
            }
            if !any {
                println!("No permission rules are stored.");
                if let Some(own) = &own {
                    println!(
                        "\"Allow always\" in a permission dialog adds one to {} (your own file for this project, outside the repository)",
                        own.display()
                    );
                }
            }
            Ok(())
        }
        Action::Remove { rule, global: g } => {
            let path = if g {
                global
                    .ok_or_else(|| anyhow::anyhow!("no global config directory on this system"))?
            } else if let Some(own) = own.filter(|o| holds(o, &rule)) {
                // The person's own file first: "Allow always" puts rules
                // there, and no trust rests on it.
                remove_rule(&own, &rule)?;
                println!("Removed `{rule}` from {}", own.display());
                return Ok(());
            } else {
                project
            };
            let before = std::fs::read(&path).ok();
            if remove_rule(&path, &rule)? {
                if !g && let Ok(store) = crate::config::trust::TrustStore::default_location() {
                    let global = crate::config::global_dir().map(|d| d.join("config.toml"));
                    let hooks = crate::config::load(&root)
                        .map(|c| {
                            let roots = super::startup::roots_at(&root, &c);
                            crate::extensions::project_held(&roots).1
                        })
                        .unwrap_or_default();
                    crate::config::trust::keep_after_own_edit_with(
                        &store,
                        &root,
                        global.as_deref(),
                        before.as_deref(),
                        &hooks,
                    )?;
                }
                println!("Removed `{rule}` from {}", path.display());
                Ok(())
            } else {
                anyhow::bail!(
                    "`{rule}` is not in {} (see `cairn permissions list`)",
                    path.display()
                )
            }
        }
    }
}
