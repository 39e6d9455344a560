//! `cairn permissions list|remove`: the stored allow/deny rules.

use anyhow::Result;

/// What to do with the stored rules.
pub enum Action {
    List,
    Remove { rule: String, global: bool },
}

pub fn run(action: Action) -> Result<()> {
    crate::term_safe::quiet_broken_pipe();
    use crate::permission::store::{list_rules, remove_rule};
    let cwd = std::env::current_dir()?;
    let root = crate::agent::instructions::project_root(&cwd);
    let project = crate::config::project_config_path(&root);
    let global = crate::config::global_dir().map(|d| d.join("config.toml"));
    match action {
        Action::List => {
            let mut any = false;
            for path in global.iter().chain(std::iter::once(&project)) {
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
                println!(
                    "\"Allow always\" in a permission dialog adds one to {}",
                    project.display()
                );
            }
            Ok(())
        }
        Action::Remove { rule, global: g } => {
            let path = if g {
                global
                    .ok_or_else(|| anyhow::anyhow!("no global config directory on this system"))?
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
