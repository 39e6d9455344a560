//! The third inspector: a model repeating the identical call is stuck, and
//! running the call again will not unstick it.

use serde_json::Value;

/// Tools whose identical repeated calls are legitimate (polling a job).
const POLLING_TOOLS: &[&str] = &["job_output"];

#[derive(Debug, Clone, Default)]
pub struct Repetition {
    /// The `limit`-th identical call in a row is blocked (so `limit - 1`
    /// run); 0 turns the check off.
    limit: u32,
    last: Option<(String, Value)>,
    count: u32,
}

impl Repetition {
    pub fn new(limit: u32) -> Repetition {
        Repetition {
            limit,
            ..Repetition::default()
        }
    }

    pub fn limit(&self) -> u32 {
        self.limit
    }

    /// Record a call about to run; Some(message) when it must be blocked.
    pub fn check(&mut self, tool: &str, input: &Value) -> Option<String> {
        let same = self
            .last
            .as_ref()
            .is_some_and(|(t, i)| t == tool && i == input);
        if same {
            self.count = self.count.saturating_add(1);
        } else {
            self.last = Some((tool.to_string(), input.clone()));
            self.count = 1;
        }
        if self.limit == 0 || POLLING_TOOLS.contains(&tool) || self.count < self.limit {
            return None;
        }
        Some(format!(
            "blocked: this is the same `{tool}` call with the same arguments {} times in a row; \
             repeating it will not give a different result. Change your approach: read the last \
             result again, try different arguments or another tool, or ask the user.",
            self.count
        ))
    }

    /// Takes back a call that was cancelled or failed: it says nothing
    /// about the model being stuck, so it does not count toward the limit.
    pub fn uncount(&mut self, tool: &str, input: &Value) {
        let same = self
            .last
            .as_ref()
            .is_some_and(|(t, i)| t == tool && i == input);
        if same {
            self.count = self.count.saturating_sub(1);
        }
    }

    /// Forget the history (a new user turn).
    pub fn reset(&mut self) {
        self.last = None;
        self.count = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn blocks_after_the_limit_and_resets_on_a_different_call() {
        let mut r = Repetition::new(3);
        let a = json!({"command": "cargo test"});
        assert_eq!(r.check("bash", &a), None);
        assert_eq!(r.check("bash", &a), None);
        let blocked = r.check("bash", &a);
        assert!(
            blocked.is_some_and(|m| m.contains("3 times") && m.contains("Change your approach"))
        );
        assert!(
            r.check("bash", &a).is_some(),
            "stays blocked while repeated"
        );
        assert_eq!(
            r.check("bash", &json!({"command": "cargo test --lib"})),
            None
        );
        assert_eq!(r.check("bash", &a), None, "count restarted");
    }

    #[test]
    fn a_taken_back_call_does_not_count() {
        let mut r = Repetition::new(2);
        let a = json!({"command": "cargo test"});
        assert_eq!(r.check("bash", &a), None);
        r.uncount("bash", &a);
        assert_eq!(r.check("bash", &a), None, "the first one was taken back");
        assert!(r.check("bash", &a).is_some());
        r.reset();
        assert_eq!(r.check("bash", &a), None, "a new prompt starts afresh");
    }

    #[test]
    fn same_arguments_on_another_tool_are_different() {
        let mut r = Repetition::new(2);
        let a = json!({"file_path": "a"});
        assert_eq!(r.check("view", &a), None);
        assert_eq!(r.check("edit", &a), None);
        assert!(r.check("edit", &a).is_some());
    }

    #[test]
    fn polling_and_zero_limit_are_never_blocked() {
        let mut r = Repetition::new(2);
        let a = json!({"id": 1});
        for _ in 0..5 {
            assert_eq!(r.check("job_output", &a), None);
        }
        let mut off = Repetition::new(0);
        for _ in 0..5 {
            assert_eq!(off.check("bash", &a), None);
        }
    }
}
