//! Reasoning effort in each wire format's own field. The level itself is
//! `crate::config::effort::Effort`; here is only how much thinking that
//! buys where a format counts it in tokens.

use super::Request;

/// The thinking budget of an Anthropic-family request (Anthropic, Bedrock
/// and Vertex's Claude): the effort's budget, or half the output limit
/// when no effort is set, always leaving room for the answer.
/// `None` when the request does not reason or the output limit is too
/// small to think in.
pub fn thinking_budget(request: &Request) -> Option<u32> {
    if !request.reasoning || request.max_tokens <= 2048 {
        return None;
    }
    let wanted = match request.effort {
        Some(e) => e.budget_tokens(),
        None => (request.max_tokens / 2).clamp(1024, 16_000),
    };
    Some(wanted.min(request.max_tokens - 1024).max(1024))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::effort::Effort;

    fn request(max_tokens: u32, effort: Option<Effort>) -> Request {
        Request {
            model: "m".into(),
            system: String::new(),
            messages: Vec::new(),
            tools: Vec::new(),
            max_tokens,
            temperature: None,
            reasoning: true,
            effort,
            web_search: None,
        }
    }

    #[test]
    fn the_budget_follows_the_effort_and_leaves_room_to_answer() {
        assert_eq!(thinking_budget(&request(32_000, None)), Some(16_000));
        assert_eq!(
            thinking_budget(&request(32_000, Some(Effort::Low))),
            Some(4096)
        );
        assert_eq!(
            thinking_budget(&request(32_000, Some(Effort::Xhigh))),
            Some(30_976)
        );
        assert_eq!(thinking_budget(&request(2048, Some(Effort::High))), None);
        let mut r = request(32_000, Some(Effort::High));
        r.reasoning = false;
        assert_eq!(thinking_budget(&r), None);
    }
}
