//! Placeholder until the full gate lands: read-only tools run, the rest asks.
use super::{CallInfo, Mode, Verdict};

pub struct Gate {
    mode: Mode,
    allow: Vec<String>,
}

impl Gate {
    pub fn new(mode: Mode) -> Gate {
        Gate {
            mode,
            allow: Vec::new(),
        }
    }
    pub fn mode(&self) -> Mode {
        self.mode
    }
    pub fn set_mode(&mut self, mode: Mode) {
        self.mode = mode;
    }
    pub fn add_allow_rule(&mut self, rule: &str) -> Result<(), String> {
        self.allow.push(rule.to_string());
        Ok(())
    }
    pub fn check(&mut self, call: &CallInfo) -> Verdict {
        let rule = format!("{}({})", call.tool, call.input);
        if self.mode == Mode::Chat {
            return Verdict::Deny {
                message: "tools are off".into(),
            };
        }
        if call.read_only || self.mode == Mode::Auto || self.allow.contains(&rule) {
            Verdict::Allow
        } else {
            Verdict::Ask {
                reasons: vec!["changes things".into()],
                rules: vec![rule],
            }
        }
    }
}
