//! What the security inspector found in one call: the block (the first
//! reason it is refused) and the cautions the person must confirm.

#[derive(Debug, Default, Clone, PartialEq)]
pub struct Findings {
    pub block: Option<String>,
    pub cautions: Vec<String>,
}

impl Findings {
    pub(super) fn block(&mut self, message: String) {
        if self.block.is_none() {
            self.block = Some(message);
        }
    }
}
